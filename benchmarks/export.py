"""Export time and peak memory, per format, for a normal report and a 2,000-citation one.

Each (report, format) runs in a fresh subprocess, so its peak resident memory is its own
(`benchmarks.rss`: the Python, WeasyPrint or markdown-it it loads, not the parent it was
started from) and pandoc's, a child process, is measured separately as the children's peak
(`ru_maxrss`, at least this process's size when pandoc started, so an upper bound). Times
are the median of `--runs` runs (default 3) of the export alone, imports excluded.

    python -m benchmarks.export            # the table docs/export.md shows
    python -m benchmarks.export --json     # the numbers, for tests
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FORMATS = ("html", "pdf", "docx")
REPORTS = ("sample", "2000 citations")
ONE = """
import json, resource, sys, time
from benchmarks.rss import own_peak_mb
from deep_research.export import render
from tests.support.reports import many_citations, sample_report
report = sample_report() if sys.argv[1] == "sample" else many_citations(2000)
render(report, "html")  # warm: parser and stylesheet loaded, not timed
seconds = []
for _ in range(int(sys.argv[3])):
    started = time.perf_counter()
    data = render(report, sys.argv[2])
    seconds.append(time.perf_counter() - started)
print(json.dumps({
    "chars": len(report), "bytes": len(data), "seconds": seconds,
    "peak_mb": own_peak_mb(),
    "child_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}))
"""


def measure(report: str, to: str, runs: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", ONE, report, to, str(runs)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "DEEP_RESEARCH_DOTENV": "0", "PATH": "/usr/bin:/bin"},
    )
    result: dict[str, Any] = json.loads(done.stdout)
    result["median_s"] = statistics.median(result.pop("seconds"))
    return {"report": report, "format": to, **result}


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| report | characters | format | file | median time | peak memory (pandoc) |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for row in rows:
        child = f" ({row['child_peak_mb']:.0f} MB)" if row["format"] == "docx" else ""
        lines.append(
            f"| {row['report']} | {row['chars']:,} | {row['format']} | "
            f"{row['bytes'] / 1024:,.0f} KB | {row['median_s']:.2f} s | "
            f"{row['peak_mb']:.0f} MB{child} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.export")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per cell (median)")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()
    rows = [measure(report, to, args.runs) for report in REPORTS for to in FORMATS]
    print(json.dumps(rows, indent=2) if args.json else table(rows))


if __name__ == "__main__":
    main()
