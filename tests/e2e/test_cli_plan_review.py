"""The plan review in the real CLI: a terminal answers y, edits in $EDITOR or line by line,
sends feedback up to the rounds cap, and resumes after a kill; a pipe skips the review."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from deep_research.cli.plan import show
from deep_research.cli.replay import timeline
from tests.support.brain import _texts, role_of
from tests.support.cli import (
    CLI_TIMEOUT,
    FOLLOW_UP_PROMPT,
    QUESTION,
    cli_env,
    read_until,
    run_cli,
    start_in_terminal,
    traffic_records,
)
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.plan_brain import PlanBrain

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

FLAGS = ("--review-plan", "--no-clarify")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def researched(llm: ScriptedOpenAIServer) -> list[str]:
    bodies = [b for b in llm.requests if role_of(b) == "researcher" and not _texts(b, "tool")]
    return sorted(_texts(b, "user")[0] for b in bodies)


def plan_requests(llm: ScriptedOpenAIServer) -> list[dict[str, Any]]:
    """Orchestrator requests that made a plan: no research result in them yet."""
    orchestrator = [b for b in llm.requests if role_of(b) == "orchestrator"]
    return [b for b in orchestrator if not any("Findings on" in t for t in _texts(b, "tool"))]


class Terminal:
    """The CLI's terminal as the test reads it: all it showed, and how far the test has looked."""

    def __init__(self, leader: int) -> None:
        self.leader = leader
        self.screen = bytearray()
        self.looked = 0  # the end of the last marker waited for

    def wait_for(self, marker: bytes) -> None:
        """Read until `marker` appears after the last one. What one read brought after that
        one counts: on a busy machine a heading and the prompt below it come in one read."""
        rest = self.screen[self.looked :]
        read_until(self.leader, marker, rest)
        self.screen[self.looked :] = rest
        found = rest.find(marker)
        assert found >= 0, self.text()
        self.looked += found + len(marker)

    def text(self) -> str:
        return ANSI.sub("", self.screen.decode(errors="replace"))


def converse(
    tmp_path: Path, env: dict[str, str], steps: list[tuple[bytes, bytes]], *args: str
) -> str:
    """Run the CLI in a terminal, answering each marker with its input; the whole screen."""
    proc, leader = start_in_terminal(tmp_path, env, *args)
    terminal = Terminal(leader)
    try:
        for marker, answer in steps:
            terminal.wait_for(marker)
            os.write(leader, answer)
        terminal.wait_for(FOLLOW_UP_PROMPT)
        os.write(leader, b"\n")  # no follow-up
        assert proc.wait(timeout=CLI_TIMEOUT) == 0, terminal.text()
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return terminal.text()


def test_y_runs_the_plan_that_was_shown(tmp_path: Path) -> None:
    brain = PlanBrain()
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        screen = converse(tmp_path, env, [(b"> ", b"y\n")], *FLAGS, QUESTION)
        assert researched(llm) == sorted(brain.topics)
        assert len(plan_requests(llm)) == 1
    assert "The research plan, for your review (round 1):" in screen
    assert "1. [ ] heat pump efficiency in cold climates" in screen
    assert "plan approved" in screen and "Report saved:" in screen
    _, records = traffic_records(tmp_path)
    assert any(r.get("kind") == "answer" and r.get("answer") == "ok" for r in records)
    lines = list(timeline(records))
    assert any("plan" in line and "round 1: heat pump efficiency" in line for line in lines)


def test_e_opens_editor_and_the_edited_plan_replaces_it(tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    # The editor sees the plan, keeps its first line, and adds one of its own.
    editor.write_text(
        '#!/bin/sh\ngrep -v "^#" "$1" | head -n 1 > "$1.kept"\n'
        'printf "# a comment\\nheat pump noise rules\\n" >> "$1.kept"\nmv "$1.kept" "$1"\n'
    )
    editor.chmod(0o755)
    with ScriptedOpenAIServer(PlanBrain()) as llm, FakeTavilyServer() as tavily:
        env = {**cli_env(llm, tavily, tmp_path), "EDITOR": str(editor)}
        screen = converse(tmp_path, env, [(b"> ", b"e\n")], *FLAGS, QUESTION)
        assert researched(llm) == ["heat pump efficiency in cold climates", "heat pump noise rules"]
        assert len(plan_requests(llm)) == 1, "the first plan only: yours is dispatched in code"
    assert "plan replaced by yours" in screen
    assert not list(tmp_path.glob("deep-research-plan-*")), "the temporary file is removed"


def test_without_editor_the_plan_is_typed_line_by_line(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(PlanBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        steps = [(b"> ", b"e\n"), (b"an empty line ends it.", b"gamma topic\ndelta topic\n\n")]
        screen = converse(tmp_path, env, steps, *FLAGS, QUESTION)
        assert researched(llm) == ["delta topic", "gamma topic"]
    assert "plan replaced by yours" in screen


def test_feedback_is_asked_again_then_the_cap_says_the_plan_runs(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(PlanBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        steps = [(b"> ", b"focus on costs\n"), (b"(round 2)", b""), (b"> ", b"cheaper ones\n")]
        screen = converse(tmp_path, env, steps, *FLAGS, QUESTION)
        asked = [t for b in plan_requests(llm) for t in _texts(b, "user")]
        assert any("focus on costs" in t for t in asked) and any("cheaper ones" in t for t in asked)
        assert researched(llm) == ["revised topic 2"]
    assert "1. [ ] revised topic 1" in screen, "round 2 shows the revised plan"
    assert "plan sent back for changes (review 1 of 2)" in screen
    assert "plan sent back (last review, 2 of 2): the revised plan runs without asking" in screen
    assert "(round 3)" not in screen


def test_a_bad_edit_is_refused_by_the_graph_and_asked_again(tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nseq 1 50 > "$1"\n')  # more items than a plan may have
    editor.chmod(0o755)
    with ScriptedOpenAIServer(PlanBrain()) as llm, FakeTavilyServer() as tavily:
        env = {**cli_env(llm, tavily, tmp_path), "EDITOR": str(editor)}
        steps = [(b"> ", b"e\n"), (b"at most 20 items", b""), (b"> ", b"y\n")]
        screen = converse(tmp_path, env, steps, *FLAGS, QUESTION)
        assert len(plan_requests(llm)) == 1
    assert "plan approved" in screen


def test_piped_run_skips_the_review_and_says_so(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(PlanBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(tmp_path, cli_env(llm, tavily, tmp_path), *FLAGS, QUESTION)
    assert result.returncode == 0, result.stderr
    assert "stdin is not a terminal: skipping the plan review" in result.stdout
    assert "for your review" not in result.stdout
    _, records = traffic_records(tmp_path)
    assert not any(r.get("kind") == "interrupt" for r in records)


def test_killed_at_the_plan_prompt_resumes_without_planning_again(tmp_path: Path) -> None:
    brain = PlanBrain()
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        proc, leader = start_in_terminal(tmp_path, env, *FLAGS, "--max-searches", "4", QUESTION)
        try:
            Terminal(leader).wait_for(b"> ")
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            os.close(leader)
        assert proc.returncode == -signal.SIGKILL
        assert len(llm.requests) == 1 and not tavily.queries
        thread = traffic_records(tmp_path)[0].stem
        screen = converse(tmp_path, env, [(b"> ", b"y\n")], "--resume", thread)
        assert len(plan_requests(llm)) == 1, "the plan call was not made again"
        assert researched(llm) == sorted(brain.topics)
        assert len(tavily.queries) == 2
    assert "The research plan, for your review (round 1):" in screen
    assert "searches      2 of 4 sent" in screen, screen


def test_a_piped_resume_of_a_paused_plan_runs_it_and_says_so(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(PlanBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        proc, leader = start_in_terminal(tmp_path, env, *FLAGS, QUESTION)
        try:
            Terminal(leader).wait_for(b"> ")
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            os.close(leader)
        thread = traffic_records(tmp_path)[0].stem
        resumed = run_cli(tmp_path, env, "--resume", thread)
        assert len(plan_requests(llm)) == 1
    assert resumed.returncode == 0, resumed.stderr
    assert "nobody can review the plan; it runs as is" in resumed.stdout
    assert "plan approved" in resumed.stdout and "Report saved:" in resumed.stdout


def test_plan_text_is_shown_literally() -> None:
    console = Console(record=True, markup=False, emoji=False, highlight=False, width=200)
    item = "[bold]Costs[/bold] in [/usr/bin] :warning: \x1b]8;;http://evil.example\x07here"
    show(console, {"plan": [{"content": item, "status": "completed"}], "round": 2, "error": "[red"})
    text = console.export_text()
    assert "1. [x] [bold]Costs[/bold] in [/usr/bin] :warning: ]8;;http://evil.example" in text
    assert "\x1b" not in text and "\x07" not in text and "[red" in text
