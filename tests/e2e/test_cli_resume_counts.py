"""One count of searches across Ctrl-C and `--resume`: the live view, the summary, `runs`,
the state and the search API agree, and none goes past the cap.

The issue's run showed `searches 29/25` in the view after a resume (it started from
`searches_used`, which mid-run also counts the shares handed to unfinished research tasks)
while the summary said `searches 10`. Here researcher HELD is stopped by Ctrl-C while its
report request waits, with its share still handed out; the resume finishes it, and a
later researcher searches once more.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from deep_research.cli.runs_table import show_runs
from tests.support.brain import ResearchBrain, _texts
from tests.support.cli import (
    CLI_TIMEOUT,
    QUESTION,
    cli_command,
    cli_env,
    screen_to_exit,
    start_in_terminal,
)
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts subprocesses and servers

FIRST = "heat pump efficiency in cold climates"
HELD = "heat pump installation costs"
LATER = "heat pump noise regulations"
CAP = 6
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class HoldingBrain(ResearchBrain):
    """Holds HELD's report request (after FIRST has reported) until `release()`; then the
    orchestrator asks for LATER."""

    reached: threading.Event = field(default_factory=threading.Event)
    holding: bool = True
    _finished: asyncio.Event = field(default_factory=asyncio.Event)
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self, server: ScriptedOpenAIServer) -> None:
        self.holding = False
        server.loop.call_soon_threadsafe(self._released.set)

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        if len(_texts(body, "tool")) == 2:
            return Reply(tool_calls=[ToolCall("research", {"topic": LATER})])
        return super()._orchestrate(body)

    async def _research(self, body: dict[str, Any]) -> Reply:
        topic, reporting = _texts(body, "user")[0], bool(_texts(body, "tool"))
        if self.holding and reporting and topic == FIRST:
            reply = await super()._research(body)
            self._finished.set()
            return reply
        if self.holding and reporting and topic == HELD:
            await self._finished.wait()
            self.reached.set()
            await self._released.wait()
        return await super()._research(body)


def test_view_summary_runs_and_search_api_agree_across_ctrl_c_and_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain = HoldingBrain(topics=[FIRST, HELD])
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        first = subprocess.Popen(
            cli_command("--max-searches", str(CAP), QUESTION),
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert brain.reached.wait(CLI_TIMEOUT), "the run never reached HELD's report"
            os.killpg(first.pid, signal.SIGINT)  # Ctrl-C
            stopped_out, stopped_err = first.communicate(timeout=CLI_TIMEOUT)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
                first.wait()
        assert first.returncode == 130, stopped_err
        sent_before = len(tavily.queries)
        brain.release(llm)
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        proc, leader = start_in_terminal(tmp_path, env, "--resume", log.stem)
        try:
            screen = screen_to_exit(proc, leader)
        finally:
            os.close(leader)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        sent = len(tavily.queries)
    assert proc.returncode == 0, screen
    assert sent_before == 2 and sent == 3, tavily.queries  # FIRST, HELD, then LATER
    # The first session's plain lines counted the searches it sent, of the cap.
    assert re.findall(r"search (\d+)/(\d+):", stopped_out) == [("1", "6"), ("2", "6")]
    # The live panel of the resumed session (drawn 4 times a second, so not every count
    # shows): it goes on from 2 and ends at what was sent, never past it.
    panel = [int(n) for n, cap in re.findall(r"searches (\d+)/(\d+)", screen) if cap == str(CAP)]
    assert panel and panel[-1] == sent, panel
    assert sent_before <= min(panel) and max(panel) <= sent <= CAP, panel
    # The summary: one count of searches, equal to what the search API received.
    assert f"searches      {sent} of {CAP} sent\r\n" in screen, screen
    assert "search budget" not in screen and "more counted against the cap" not in screen
    # `runs` shows the same count.
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert show_runs([], Console(file=out, width=300)) == 0
    [row] = [line for line in out.getvalue().splitlines() if line.startswith(log.stem)]
    assert re.search(rf"done\s+{sent}\s+\d+\s+\$0\.0\d{{3}}\s+How well", row), row
