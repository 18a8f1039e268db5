"""A budget that helps: on a priced model (gpt-4.1, served by the scripted server), a $0.30
budget researches, and a run $0.01 stopped (not even the report fits) goes on when resumed
in a new process with `--max-cost 0.2`, ending with a cited report that names the budget
that applied, not the old one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.brain import ResearchBrain
from tests.support.cli import QUESTION, priced_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts subprocesses and servers

GPT41 = {f"{role}_MODEL": "openai:gpt-4.1" for role in ("CLARIFIER", "ORCHESTRATOR", "RESEARCHER")}


def test_a_modest_budget_on_gpt_4_1_researches(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = {**priced_env(llm, tavily, tmp_path), **GPT41}
        done = run_cli(tmp_path, env, "--no-clarify", "--max-cost", "0.3", QUESTION)
        searched = list(tavily.queries)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(searched) == 2, "each researcher searched"
    assert "status        complete" in done.stdout


def test_a_budget_stop_resumed_with_a_bigger_budget_writes_a_cited_report(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = {**priced_env(llm, tavily, tmp_path), **GPT41}
        stopped = run_cli(tmp_path, env, "--no-clarify", "--max-cost", "0.01", QUESTION)
        assert stopped.returncode != 0 and "--max-cost" in stopped.stderr + stopped.stdout
        assert tavily.queries == []
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        resumed = run_cli(tmp_path, env, "--resume", log.stem, "--max-cost", "0.2")
        searched = list(tavily.queries)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert searched, "the resumed run researched"
    assert "status        complete" in resumed.stdout
    [report] = (tmp_path / "reports").glob("*.md")
    assert "$0.0100" not in report.read_text()
