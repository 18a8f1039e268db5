"""What makes a call's answer durable before a stop, under each of LangGraph's durability modes.

A step sends two calls as durable tasks; the second SIGKILLs the process while its request
is under way; another process resumes the thread. Under "sync" (what the CLI and the MCP
tool run with) and "async", the first answer was written when its task returned, in the
background while the second request was sent, and the resume reuses it: only the call cut
off is sent again. Under "exit" nothing is written until the run ends: the killed run left
no thread to resume, and everything it was answered is paid for again. (The step's own
checkpoint is what "sync" adds: on disk before the next step sends, which the budgets
need; docs/cost.md.)
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.killed_step import __file__ as CHILD


def _run(database: Path, log: Path, durability: str, how: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, CHILD, str(database), str(log), durability, how],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_an_answer_written_as_its_task_returns_is_not_sent_again_after_a_kill(
    tmp_path: Path, durability: str
) -> None:
    database, log = tmp_path / "checkpoints.sqlite", tmp_path / "sent.log"
    killed = _run(database, log, durability, "kill")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    resumed = _run(database, log, durability, "resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "answer to second" in resumed.stdout
    assert log.read_text().split() == ["first", "second", "second"]


def test_with_durability_exit_a_kill_leaves_nothing_to_resume(tmp_path: Path) -> None:
    database, log = tmp_path / "checkpoints.sqlite", tmp_path / "sent.log"
    killed = _run(database, log, "exit", "kill")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    resumed = _run(database, log, "exit", "resume")
    assert resumed.returncode != 0 and "EmptyInputError" in resumed.stderr
    assert log.read_text().split() == ["first", "second"], "the run must start over"
