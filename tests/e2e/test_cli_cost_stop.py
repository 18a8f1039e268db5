"""The budget across a stop mid-call: a real `deep-research` process is killed (SIGKILL) or
interrupted (Ctrl-C) while a researcher's request waits at the model server, then
`--resume`d in a new process. The server bills every reply it produces, the stopped one
too (a provider bills a call whose client went away): all of it stays within `--max-cost`,
the summary's cost is what the client received, and the budget left counts the stopped
call as spent.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from deep_research.cli.runs_table import show_runs
from tests.support.brain import ResearchBrain, _texts, role_of
from tests.support.cli import CLI_TIMEOUT, QUESTION, cli_command, run_cli
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.tavily_server import FakeTavilyServer

from .test_cli_cost import priced_env

pytestmark = pytest.mark.slow  # starts subprocesses and servers

HELD = "heat pumps, part 0"
BUDGET = Decimal("0.03")
# genai-prices' gpt-4o-mini: $0.15/M in, $0.60/M out, as µUSD per token.
PER_TOKEN_IN, PER_TOKEN_OUT = Decimal("0.15"), Decimal("0.6")


@dataclass
class BillingBrain(ResearchBrain):
    """Asks for one more topic every turn (only the budget ends the research), holds HELD's
    report request until `release()`, and bills every reply it produces, in µUSD, at the
    token counts the server reports (its own defaults, set on the reply to be sure)."""

    reached: threading.Event = field(default_factory=threading.Event)
    held_billed: threading.Event = field(default_factory=threading.Event)
    bills: list[int] = field(default_factory=list)
    held_bill: int = 0
    holding: bool = True
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self, server: ScriptedOpenAIServer) -> None:
        server.loop.call_soon_threadsafe(self._released.set)

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        turn = len(_texts(body, "tool"))
        return Reply(tool_calls=[ToolCall("research", {"topic": f"heat pumps, part {turn}"})])

    async def __call__(self, body: dict[str, Any]) -> Reply:
        reply = await super().__call__(body)
        held = (
            self.holding
            and role_of(body) == "researcher"
            and _texts(body, "user")[0] == HELD
            and bool(_texts(body, "tool"))
        )
        if held:
            self.holding = False
            reply.content += "\n\n" + "Heat pumps keep working in the cold. " * 50
            self.reached.set()
            await self._released.wait()  # the client is stopped meanwhile
        produced = len(reply.content) + sum(len(c.arguments_text()) for c in reply.tool_calls)
        reply.prompt_tokens = max(1, len(json.dumps(body.get("messages", []))) // 4)
        reply.completion_tokens = max(1, produced // 4)
        bill = PER_TOKEN_IN * reply.prompt_tokens + PER_TOKEN_OUT * reply.completion_tokens
        self.bills.append(int(bill.to_integral_value(rounding="ROUND_CEILING")))
        if held:
            self.held_bill = self.bills[-1]
            self.held_billed.set()
        return reply


def summary_costs(stdout: str) -> tuple[Decimal, Decimal, Decimal]:
    """The summary's total, its searches' part and the budget left, in USD."""
    [line] = [line for line in stdout.splitlines() if line.startswith("cost ")]
    total = re.search(r"cost +\$(\d+\.\d{4})", line)
    search = re.search(r"search \$(\d+\.\d{4})", line)
    left = re.search(r"budget \$0\.0300 for model calls, \$(\d+\.\d{4}) left", line)
    assert total and search and left, line
    return Decimal(total.group(1)), Decimal(search.group(1)), Decimal(left.group(1))


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_a_run_stopped_mid_call_and_resumed_keeps_every_billed_call_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: signal.Signals
) -> None:
    brain = BillingBrain()
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = {**priced_env(llm, tavily, tmp_path), "LLM_MAX_TOKENS": "1000"}
        argv = ["--no-clarify", "--max-cost", str(BUDGET), "--set", "max_orchestrator_turns=40"]
        first = subprocess.Popen(
            cli_command(*argv, QUESTION),
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert brain.reached.wait(CLI_TIMEOUT), "the held request never arrived"
            os.killpg(first.pid, how)
            _, stopped_err = first.communicate(timeout=CLI_TIMEOUT)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
                first.wait()
        if how == signal.SIGINT:
            assert first.returncode == 130, stopped_err
        brain.release(llm)  # the server finishes (and bills) the call nobody reads now
        assert brain.held_billed.wait(CLI_TIMEOUT)
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        resumed = run_cli(tmp_path, env, "--resume", log.stem)
        billed, held = sum(brain.bills), brain.held_bill
        searches = len(tavily.queries)
    assert resumed.returncode in (0, 3), resumed.stderr
    out = resumed.stdout
    assert "The run stopped at its cost budget" in out, out  # the budget ended the research
    # Everything the server billed, the stopped call included, is within the budget.
    assert held > 0 and billed <= BUDGET * 1_000_000, (billed, held)
    total, search, left = summary_costs(out)
    assert search == Decimal("0.008") * searches, out
    # The summary's model calls are the replies the client received: all but the stopped one.
    received = Decimal(billed - held) / 1_000_000
    assert abs(total - search - received) <= Decimal("0.0001"), (out, billed, held)
    # What is left counts the stopped call as spent (at its reservation: at least its bill).
    assert left <= BUDGET - Decimal(billed) / 1_000_000 + Decimal("0.00005"), (out, billed)
    # `runs` shows the summary's total.
    monkeypatch.chdir(tmp_path)
    listed = io.StringIO()
    assert show_runs([], Console(file=listed, width=300)) == 0
    [row] = [line for line in listed.getvalue().splitlines() if line.startswith(log.stem)]
    assert f"${total:,.4f}" in row, row
