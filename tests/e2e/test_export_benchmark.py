"""`python -m benchmarks.export` (docs/export.md) runs and reports every cell it promises."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.cli import REPO

pytestmark = pytest.mark.slow


def test_the_export_benchmark_measures_each_format_of_both_reports() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.export", "--runs", "1", "--json"],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)
    cells = [(row["report"], row["format"]) for row in rows]
    assert cells == [(r, f) for r in ("sample", "2000 citations") for f in ("html", "pdf", "docx")]
    for row in rows:
        assert row["bytes"] > 0 and row["median_s"] >= 0 and row["peak_mb"] > 0
    docx_rows = [row for row in rows if row["format"] == "docx"]
    assert all(row["child_peak_mb"] > 0 for row in docx_rows)  # pandoc's own, measured
