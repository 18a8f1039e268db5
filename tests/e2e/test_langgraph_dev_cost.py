"""The cost budget on a `langgraph dev` thread: its run is cancelled while a researcher's
request waits at the model server (runs write their checkpoints in the background there,
durability "async"), then run again on the thread. Everything the server billed, the
cancelled call too, stays within `max_cost_usd`, and the thread's state counts it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT, langgraph_dev, server_env

from .test_cli_cost_stop import BillingBrain

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"
BUDGET = 0.03
WAIT = 120.0
CONTEXT = {"allow_clarification": False, "max_cost_usd": BUDGET, "max_orchestrator_turns": 40}


def priced(model: ScriptedOpenAIServer) -> dict[str, str]:
    """Every role on `openai:gpt-4o-mini` ($0.15/M in, $0.60/M out), answered locally."""
    roles = {f"{role}_MODEL": "openai:gpt-4o-mini" for role in ("CLARIFIER", "ORCHESTRATOR")}
    return {
        **roles,
        "RESEARCHER_MODEL": "openai:gpt-4o-mini",
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "sk-test-0123456789abcdef",
        "LLM_MAX_TOKENS": "1000",
    }


async def cancel_mid_call_then_run_again(
    url: str, brain: BillingBrain, model: ScriptedOpenAIServer
) -> dict[str, Any]:
    client = get_client(url=url, api_key=None, timeout=WAIT)
    thread_id = (await client.threads.create())["thread_id"]
    question = {"messages": [{"role": "user", "content": QUESTION}]}
    run = await client.runs.create(thread_id, ASSISTANT, input=question, context=CONTEXT)
    assert await asyncio.to_thread(brain.reached.wait, WAIT), "the held request never came"
    await client.runs.cancel(thread_id, run["run_id"], wait=True)
    brain.release(model)  # the server finishes (and bills) the call nobody reads now
    assert await asyncio.to_thread(brain.held_billed.wait, WAIT)
    await client.runs.wait(thread_id, ASSISTANT, input=None, context=CONTEXT, raise_error=True)
    state = await client.threads.get_state(thread_id)
    values: dict[str, Any] = state["values"]
    return values


def test_a_thread_cancelled_mid_call_and_run_again_stays_within_its_budget(
    tmp_path: Path,
) -> None:
    brain = BillingBrain()
    (home := tmp_path / "home").mkdir()
    with ScriptedOpenAIServer(brain) as model, FakeTavilyServer() as tavily:
        env = server_env(home, model, tavily) | priced(model)
        with langgraph_dev(tmp_path, env) as url:
            values = asyncio.run(cancel_mid_call_then_run_again(url, brain, model))
        billed, held = sum(brain.bills), brain.held_bill
    assert "## Cost budget" in values["final_report"], "the budget ended the research"
    # Everything the server billed, the cancelled call included, is within the budget,
    # and the thread counts it all (the cancelled call at its reservation).
    assert held > 0 and billed <= BUDGET * 1_000_000, (billed, held)
    assert billed <= values["cost_counted"] <= BUDGET * 1_000_000, (values["cost_counted"], billed)
    # The usage is the replies the graph received: all but the cancelled one.
    usage = values["usage"]
    models_usd = usage["usd"] - usage["by_role"].get("search", {}).get("usd", 0.0)
    assert models_usd == pytest.approx((billed - held) / 1_000_000, abs=1e-6 * usage["calls"])
