"""How fast the small commands answer, as ratios to importing the graph.

Each runs as a fresh subprocess (the median of 5, after one warm-up run that fills the
bytecode and file caches), so the numbers say what a person waits for:

- `deep-research --help` should cost a small fraction of `import deep_research.graph`
  (target ≤ 0.15×);
- `memory list` and `library list` read Chroma's catalogue without chromadb or the model
  (`deep_research/memory/catalogue.py`), so they cost about what `--help` does; they list a
  memory holding three documents;
- `library add` of three small files needs chromadb and the model, into a fresh memory each
  run: the price of the work, shown for comparison.

Commands run as `python -m deep_research.cli`, the same entry point as the `deep-research`
script, so the checkout being measured is the one imported; each gets its own MEMORY_DIR
and reads no `.env`.

Run from the repository root: `python -m benchmarks.startup`; `python -m benchmarks`
reports the same numbers beside its runs.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

RUNS = 5
TARGET = 0.15
CLI = [sys.executable, "-m", "deep_research.cli"]
HELP = [*CLI, "--help"]
GRAPH = [sys.executable, "-c", "import deep_research.graph"]
DOCUMENTS = 3


def median_seconds(
    command: list[str],
    runs: int = RUNS,
    env: dict[str, str] | None = None,
    before: Callable[[], dict[str, str]] | None = None,
) -> float:
    """The median wall time of `command`; `before` gives each run (and the warm-up) a
    fresh environment, for commands whose second run would find their work done."""
    times = []
    for run in range(runs + 1):  # the first is the warm-up
        run_env = before() if before else env
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=run_env)
        if run:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _env(memory: Path) -> dict[str, str]:
    # Embedded, as these numbers always were: `benchmarks.memory_open` times each way to open.
    env = {**os.environ, "MEMORY_DIR": str(memory), "DEEP_RESEARCH_DOTENV": "0"}
    return {**env, "MEMORY_SHARE": "false"}


def _documents(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(DOCUMENTS):
        path = folder / f"note-{number}.md"
        path.write_text(f"# Note {number}\n\nHeat pumps keep working at -{number * 10} °C.\n")
        paths.append(str(path))
    return paths


def measure(runs: int = RUNS) -> dict[str, float]:
    """Seconds per command (medians) and each one's ratio to importing the graph."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        documents = _documents(root / "docs")
        listed = _env(root / "listed")
        add = [*CLI, "library", "add", *documents]
        subprocess.run(add, check=True, env=listed, capture_output=True)
        fresh = iter(range(runs + 1))
        seconds = {
            "help_s": median_seconds(HELP, runs),
            "memory_list_s": median_seconds([*CLI, "memory", "list"], runs, listed),
            "library_list_s": median_seconds([*CLI, "library", "list"], runs, listed),
            "library_add_s": median_seconds(
                add,
                runs,
                before=lambda: _env(root / f"fresh-{next(fresh)}"),
            ),
            "import_graph_s": median_seconds(GRAPH, runs),
        }
    graph = seconds["import_graph_s"]
    ratios = {
        name.removesuffix("_s") + "_over_import": seconds[name] / graph
        for name in seconds
        if name != "import_graph_s"
    }
    return {name: round(value, 3) for name, value in {**seconds, **ratios}.items()}


def main() -> None:
    got = measure()
    rows = [
        ("deep-research --help", "help"),
        ("deep-research memory list", "memory_list"),
        ("deep-research library list", "library_list"),
        (f"deep-research library add ({DOCUMENTS} files)", "library_add"),
    ]
    print(f"import deep_research.graph           {got['import_graph_s']:.3f} s (median of {RUNS})")
    for label, name in rows:
        print(f"{label:<36} {got[name + '_s']:.3f} s  {got[name + '_over_import']:.3f}x")
    verdict = "meets" if got["help_over_import"] <= TARGET else "misses"
    print(f"--help {verdict} the {TARGET}x target")


if __name__ == "__main__":
    main()
