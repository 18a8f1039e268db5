"""A process's own peak memory, not the one it was started from (the CI failure of stop 55:
a 1.6 GB pytest worker made every export child report 1,617 MB)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.rss import own_peak_mb

REPO = Path(__file__).resolve().parents[2]

# A parent that touches 400 MB, then starts a child that reports both measures.
PARENT = """
import subprocess, sys
held = bytearray(400 * 1024 * 1024)
for at in range(0, len(held), 4096):
    held[at] = 1
child = (
    "import json, resource; from benchmarks.rss import own_peak_mb; "
    "print(json.dumps([own_peak_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024]))"
)
sys.stdout.write(subprocess.run([sys.executable, "-c", child], capture_output=True,
                                text=True, check=True).stdout)
"""


def test_a_child_of_a_big_parent_reports_its_own_peak_not_the_parents() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PARENT],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    own, inherited = json.loads(done.stdout)
    assert inherited > 400  # what the old measure said: the parent's size
    assert 5 < own < 100


def test_this_process_peak_is_at_least_what_it_holds_now() -> None:
    held = bytearray(64 * 1024 * 1024)
    for at in range(0, len(held), 4096):
        held[at] = 1
    assert own_peak_mb() >= 64


def test_a_status_file_that_cannot_be_read_falls_back_to_ru_maxrss(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from benchmarks import rss

    for content in (b"VmHWM:\n", b"VmHWM:\tabc kB\n", b"\xff\xfeVmHWM: 1 kB\n", b"nothing\n"):
        status = tmp_path / "status"
        status.write_bytes(content)
        monkeypatch.setattr(rss, "STATUS", status)
        assert rss.own_peak_mb() > 5, content  # this process's ru_maxrss, not an error
    monkeypatch.setattr(rss, "STATUS", tmp_path / "missing")
    assert rss.own_peak_mb() > 5
