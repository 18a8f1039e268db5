"""`python -m benchmarks.distributed` runs and reports what docs/distributed.md shows: here
its `--quick` form (4 threads, the short lease), shapes only, never seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from benchmarks.distributed import markdown
from tests.support.cli import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_the_distributed_benchmark_reports_throughput_takeover_and_size() -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.distributed", "--quick", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    assert [r["instances"] for r in results["throughput"]] == [1, 2]
    for run in results["throughput"]:
        assert run["threads"] == 4 and run["seconds"] > 0
        assert run["postgres_bytes_per_thread"] > 0 and run["searches"] > 0
    [takeover] = results["takeover"]
    assert takeover["finished"] is True and takeover["kill_to_resume_seconds"] is not None
    assert takeover["lease_seconds"] == 5
    table = markdown(results)
    assert table.count("\n| 1 | 4 |") == 1 and "| 5 s | 1 s |" in table
