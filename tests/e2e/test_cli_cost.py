"""What a run costs, where a CLI user looks: the live panel, the summary and `runs`, from a
priced model (`openai:gpt-4o-mini`, served by the scripted server, which sends `usage`) and
the fake Tavily (one credit a search); and a budget that stops the run with a report.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.brain import ResearchBrain, _texts
from tests.support.cli import (
    QUESTION,
    priced_env,
    run_cli,
    screen_to_exit,
    start_in_terminal,
)
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts subprocesses and servers

TOPICS = ["heat pump efficiency in cold climates", "heat pump installation costs"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class EndlessBrain(ResearchBrain):
    """Asks for one more topic every turn and reports 20,000 prompt tokens a call ($0.003):
    only the budget ends the research."""

    async def __call__(self, body: dict[str, Any]) -> Reply:
        reply = await super().__call__(body)
        reply.prompt_tokens = 20_000
        return reply

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        turn = len(_texts(body, "tool"))
        return Reply(tool_calls=[ToolCall("research", {"topic": f"heat pumps, part {turn}"})])


def test_the_panel_the_summary_and_runs_show_one_cost_within_the_budget(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain(topics=TOPICS)) as llm, FakeTavilyServer() as tavily:
        env = priced_env(llm, tavily, tmp_path)
        proc, leader = start_in_terminal(tmp_path, env, "--no-clarify", "--max-cost", "1", QUESTION)
        try:
            screen = screen_to_exit(proc, leader)
        finally:
            os.close(leader)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        searches = len(tavily.queries)
        listed = run_cli(tmp_path, env, "runs")
    assert proc.returncode == 0, screen
    # The summary: the total, each role (searches at one $0.008 credit each), the budget.
    [line] = [line for line in screen.splitlines() if line.startswith("cost ")]
    total = float(re.search(r"cost +\$(\d+\.\d{4})", line).group(1))  # type: ignore[union-attr]
    assert f"search ${0.008 * searches:,.4f}" in line and searches == 2, line
    assert re.search(r"orchestrator \$0\.\d{4}, researcher \$0\.\d{4}", line), line
    # The budget holds the model calls (searches are held by the search cap).
    models = total - 0.008 * searches
    assert f"budget $1.0000 for model calls, ${1 - models:,.4f} left" in line, line
    assert 0.016 < total < 1, line
    # The live panel went up call by call and ended where the summary ends.
    panel = re.findall(r"cost \$(\d+\.\d{4}) \(\$(\d+\.\d{4}) left\)", screen)
    spent = [float(cost) for cost, _ in panel]
    assert spent and spent == sorted(spent) and spent[-1] == pytest.approx(total, abs=1e-4)
    assert float(panel[-1][1]) == pytest.approx(1 - models, abs=1e-4), panel[-1]
    # `runs` shows the same cost.
    assert listed.returncode == 0, listed.stderr
    [row] = [line for line in listed.stdout.splitlines() if " done " in line]
    assert f"${total:,.4f}" in row, row


def test_a_budget_that_runs_out_writes_the_report_and_says_why(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(EndlessBrain()) as llm, FakeTavilyServer() as tavily:
        env = priced_env(llm, tavily, tmp_path)
        argv = ["--no-clarify", "--max-cost", "0.05", "--set", "max_orchestrator_turns=30"]
        result = run_cli(tmp_path, env, *argv, QUESTION)
        searches = len(tavily.queries)
    assert result.returncode in (0, 3), result.stderr
    out = result.stdout
    # The plain view prints the orchestrator's note; it names the flag that raises it.
    assert "The run stopped at its cost budget" in out and "--max-cost" in out, out
    assert searches >= 1 and "orchestrator turn 30" not in out, "the budget ended it"
    [report] = (tmp_path / "reports").glob("*.md")
    assert "## Cost budget" in report.read_text()
    [line] = [line for line in out.splitlines() if line.startswith("cost ")]
    spent = re.search(r"cost +\$(\d+\.\d{4}) .*budget \$0\.0500 for model calls", line)
    assert spent, line
    assert float(spent.group(1)) - 0.008 * searches <= 0.05, line  # the model calls' part


class NoUsageBrain(ResearchBrain):
    """The default run from a server that never sends `usage`."""

    async def __call__(self, body: dict[str, Any]) -> Reply:
        reply = await super().__call__(body)
        reply.omit_usage = True
        return reply


def test_the_summary_counts_estimated_tokens_when_the_server_sends_no_usage(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(NoUsageBrain()) as llm, FakeTavilyServer() as tavily:
        env = priced_env(llm, tavily, tmp_path)
        result = run_cli(tmp_path, env, "--no-clarify", "--max-cost", "1", QUESTION)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    rows = [line for line in out.splitlines() if line.startswith(("orchestrator ", "researcher "))]
    assert len(rows) == 2, out
    for row in rows:  # charged for, so counted: never "0 tokens in, 0 out"
        tokens = re.search(r"~([\d,]+) tokens in +~([\d,]+) out \(estimated\)", row)
        assert tokens and int(tokens[1].replace(",", "")) > 0, row
        assert int(tokens[2].replace(",", "")) > 0, row
    [cost] = [line for line in out.splitlines() if line.startswith("cost ")]
    assert "calls' tokens estimated" in cost and not cost.startswith("cost          $0.0000 ")
