"""How fast `deep-research --help` answers, as a ratio to importing the graph.

Both run as fresh subprocesses (the median of 5 each, after one warm-up run that fills the
bytecode and file caches), so the ratio says what a person waits for: `--help` should cost
a small fraction of `import deep_research.graph` (target ≤ 0.15×). `--help` runs as
`python -m deep_research.cli`, the same entry point as the `deep-research` script, so the
checkout being measured is the one imported.

Run from the repository root: `python -m benchmarks.startup`; `python -m benchmarks`
reports the same two numbers beside its runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 5
TARGET = 0.15
HELP = [sys.executable, "-m", "deep_research.cli", "--help"]
GRAPH = [sys.executable, "-c", "import deep_research.graph"]


def median_seconds(command: list[str], runs: int = RUNS) -> float:
    subprocess.run(command, check=True, capture_output=True)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    help_seconds = median_seconds(HELP)
    graph_seconds = median_seconds(GRAPH)
    ratio = help_seconds / graph_seconds
    print(f"deep-research --help       {help_seconds:.3f} s (median of {RUNS})")
    print(f"import deep_research.graph {graph_seconds:.3f} s (median of {RUNS})")
    verdict = "meets" if ratio <= TARGET else "misses"
    print(f"ratio                      {ratio:.3f}x ({verdict} the {TARGET}x target)")


if __name__ == "__main__":
    main()
