"""Durable runs: kill the CLI mid-research, resume it, and read the scripted servers' logs.

The brain lets researcher FINISHED complete, then holds researcher CUT's report request
(after CUT's search) open; the test kills the CLI there. On resume FINISHED must not run
again, and the search cap must still count both searches made before the kill.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from deep_research.cli.main import main
from tests.support.brain import ResearchBrain, _texts, role_of
from tests.support.cli import CLI_TIMEOUT, QUESTION, cli_command, cli_env, run_cli
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

FINISHED = "heat pump efficiency in cold climates"
CUT = "heat pump installation costs"
LATER = "heat pump noise regulations"
PERSIST_DEADLINE = 30.0


@dataclass
class CrashingBrain(ResearchBrain):
    """Holds CUT's report request open (once FINISHED has reported) until `release()`."""

    holding: bool = True
    reached: threading.Event = field(default_factory=threading.Event)
    _finished: asyncio.Event = field(default_factory=asyncio.Event)
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self, server: ScriptedOpenAIServer) -> None:
        self.holding = False
        server.loop.call_soon_threadsafe(self._released.set)

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        # Turn 1: FINISHED and CUT in parallel; turn 2: LATER, after the cap is used up.
        if len(_texts(body, "tool")) == 2:
            return Reply(tool_calls=[ToolCall("research", {"topic": LATER})])
        return super()._orchestrate(body)

    async def _research(self, body: dict[str, Any]) -> Reply:
        topic, reporting = _texts(body, "user")[0], bool(_texts(body, "tool"))
        if self.holding and reporting and topic == FINISHED:
            reply = await super()._research(body)
            self._finished.set()
            return reply
        if self.holding and reporting and topic == CUT:
            await self._finished.wait()
            self.reached.set()
            await self._released.wait()
        return await super()._research(body)


def researcher_topics(bodies: list[dict[str, Any]]) -> list[str]:
    return [_texts(b, "user")[0] for b in bodies if role_of(b) == "researcher"]


def wait_until_persisted(database: Path, text: str) -> None:
    """Poll the checkpoint database until a top-level task write containing `text` is saved.

    Only the top-level namespace counts: the research subgraph checkpoints its own steps
    (under `research:<task>`), and those hold the findings before the task has finished.
    """
    query = "SELECT value FROM writes WHERE checkpoint_ns = '' AND channel = 'messages'"
    deadline = time.monotonic() + PERSIST_DEADLINE
    while time.monotonic() < deadline:
        if database.exists():
            with sqlite3.connect(database) as db:
                blobs = [row[0] for row in db.execute(query)]
            if any(text.encode() in bytes(blob) for blob in blobs if blob):
                return
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint write containing {text!r} after {PERSIST_DEADLINE}s")


def test_killed_run_resumes_without_redoing_finished_research(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    brain = CrashingBrain(topics=[FINISHED, CUT])
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        proc = subprocess.Popen(
            cli_command("--max-searches", "2", QUESTION),
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            assert brain.reached.wait(CLI_TIMEOUT), "the run never reached CUT's report"
            wait_until_persisted(
                tmp_path / ".deep_research" / "checkpoints.sqlite", f"Findings on {FINISHED}"
            )
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
        before_kill, searches_before_kill = llm.requests, tavily.queries
        brain.release(llm)
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        monkeypatch.chdir(tmp_path)
        assert main(["runs"]) == 0
        assert f"{log.stem}" in (listed := capsys.readouterr().out), listed
        assert "stopped mid-run" in listed
        resumed = run_cli(tmp_path, env, "--resume", log.stem)
        after_kill = llm.requests[len(before_kill) :]

    assert resumed.returncode == 0, resumed.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    resume_at = next(i for i, r in enumerate(records) if r.get("action") == "resume")
    after = records[resume_at:]
    started_again = [r["topic"] for r in after if r.get("event") == "research_started"]
    assert started_again == [CUT, LATER], "only unfinished research runs after the resume"
    assert sorted(searches_before_kill) == sorted([f"{CUT} 0", f"{FINISHED} 0"])
    assert FINISHED in researcher_topics(before_kill)
    resumed_topics = researcher_topics(after_kill)
    assert FINISHED not in resumed_topics, "a finished researcher ran again"
    assert CUT in resumed_topics and LATER in resumed_topics
    # CUT's subgraph resumed from its own checkpoint: its report was written from the
    # results it had, without searching again.
    assert resumed_topics.count(CUT) == 1
    # Both searches made before the kill still count: LATER finds the cap (2) used up.
    assert tavily.queries == searches_before_kill, "a search ran beyond the cap after resume"
    later = [b for b in after_kill if role_of(b) == "researcher" and _texts(b, "user")[0] == LATER]
    assert any("Search cap reached" in text for b in later for text in _texts(b, "tool"))
    assert "searches      2 of 2 sent, 1 refused at the cap\n" in resumed.stdout, resumed.stdout
    report = next((tmp_path / "reports").glob("*.md")).read_text()
    assert f"{FINISHED.replace(' ', '-')}" in report and CUT.replace(" ", "-") in report


def test_a_run_stopped_while_saving_its_report_saves_it_on_resume(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        assert run_cli(tmp_path, env, QUESTION).returncode == 0
        # As if stopped between the graph's end and the file: no report, no end record.
        for report in (tmp_path / "reports").glob("*.md"):
            report.unlink()
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        kept = [line for line in log.read_text().splitlines() if '"action": "end"' not in line]
        log.write_text("\n".join(kept) + "\n")
        calls = len(llm.requests)
        resumed = run_cli(tmp_path, env, "--resume", log.stem)
        assert len(llm.requests) == calls, "nothing ran again"
    assert resumed.returncode == 0, resumed.stderr
    [report] = (tmp_path / "reports").glob("*.md")
    assert report.read_text().startswith("# ")
    assert "Report saved" in resumed.stdout
