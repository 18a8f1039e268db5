"""How long opening the memory takes: embedded, starting its shared server, attaching to it.

Each sample is a fresh process that imports chromadb and checks the model's files first,
then times `open_store` alone (and one query, the first request a run makes), on one
memory directory holding a few notes:

- *embedded*: `MEMORY_SHARE=false`, the process opens the directory itself;
- *first start*: no server runs, so the process starts the keeper and waits for Chroma;
- *attach*: the server already runs, so the process reads `server.json`, checks the
  keeper and its heartbeat, and connects.

Run from the repository root: `python -m benchmarks.memory_open` (medians of 5).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RUNS = 5
SAMPLE = """
import asyncio, json, time
import chromadb  # imported before the clock: every mode pays it alike
from deep_research.embedding import loader
from deep_research.memory import LIBRARY_COLLECTION, configured
from deep_research.memory.open import open_store_blocking

loader.weights()
start = time.perf_counter()
store = open_store_blocking(configured())
opened = time.perf_counter() - start
asyncio.run(store.items(LIBRARY_COLLECTION, limit=1, texts=False))
print(json.dumps({"open": opened, "first_request": time.perf_counter() - start - opened}))
"""
FILL = """
import asyncio
from deep_research.memory import LIBRARY_COLLECTION, open_store

async def main():
    store = await open_store()
    for i in range(3):
        await store.add(LIBRARY_COLLECTION, f"note{i}", f"heat pumps note {i}", {})

asyncio.run(main())
"""


def _env(memory: Path, share: bool) -> dict[str, str]:
    return {
        **os.environ,
        "MEMORY_DIR": str(memory),
        "MEMORY_SHARE": "true" if share else "false",
        "MEMORY_SERVER_IDLE": "120",
        "DEEP_RESEARCH_DOTENV": "0",
    }


def _sample(memory: Path, share: bool) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", SAMPLE],
        env=_env(memory, share),
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _stop(memory: Path) -> None:
    from deep_research.memory.sharing import stop

    stop(memory)


def measure(runs: int = RUNS) -> dict[str, dict[str, float]]:
    """Median seconds to open, and to answer the first request, for each mode."""
    with tempfile.TemporaryDirectory() as tmp:
        memory = Path(tmp) / "memory"
        subprocess.run([sys.executable, "-c", FILL], env=_env(memory, False), check=True)
        modes: dict[str, list[dict[str, float]]] = {"embedded": [], "first start": []}
        modes["attach"] = []
        try:
            _sample(memory, False)  # warm-up: bytecode and file caches
            for _ in range(runs):
                _stop(memory)  # the keeper holds the directory: an embedded open would fail
                modes["embedded"].append(_sample(memory, False))
                modes["first start"].append(_sample(memory, True))
                modes["attach"].append(_sample(memory, True))
        finally:
            _stop(memory)
    return {
        mode: {key: statistics.median(s[key] for s in samples) for key in samples[0]}
        for mode, samples in modes.items()
    }


def main() -> None:
    numbers = measure()
    print("| opening the memory | open (s) | first request (s) |")
    print("| --- | ---: | ---: |")
    for mode, seconds in numbers.items():
        print(f"| {mode} | {seconds['open']:.3f} | {seconds['first_request']:.3f} |")


if __name__ == "__main__":
    main()
