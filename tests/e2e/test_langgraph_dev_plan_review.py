"""Plan review through a real `langgraph dev`: the interrupt payload as the SDK gets it, a
refused value, feedback, approval, and the README's SDK snippet replacing the plan."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.support.brain import role_of
from tests.support.fakes.openai_server import message_text
from tests.support.langgraph_dev import ASSISTANT, DevServer
from tests.support.plan_brain import PlanBrain
from tests.support.readme import block_after, run_with_top_level_await, section

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"
RUN_TIMEOUT = 120.0
CONTEXT = {"review_plan": True, "allow_clarification": False}
BRAIN = PlanBrain  # behind the module's `server`


def plan_requests(bodies: list[dict[str, Any]]) -> int:
    orchestrator = [b for b in bodies if role_of(b) == "orchestrator"]
    return sum(
        not any("Findings on" in message_text(m) for m in b["messages"]) for b in orchestrator
    )


async def test_the_sdk_gets_the_plan_and_resumes_with_feedback_then_ok(server: DevServer) -> None:
    client = get_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)
    thread_id = (await client.threads.create())["thread_id"]
    before, searched = len(server.model.requests), len(server.tavily.queries)

    async def run(**kwargs: Any) -> Any:
        await client.runs.wait(thread_id, ASSISTANT, context=CONTEXT, raise_error=True, **kwargs)
        state = await client.threads.get_state(thread_id)
        return state["interrupts"][0]["value"] if state["interrupts"] else state["values"]

    first = await run(input={"messages": [{"role": "user", "content": QUESTION}]})
    assert first == {
        "plan": [
            {"content": "heat pump efficiency in cold climates", "status": "pending"},
            {"content": "heat pump installation costs", "status": "pending"},
        ],
        "round": 1,
    }
    assert len(server.tavily.queries) == searched, "nothing is researched before approval"
    refused = await run(command={"resume": [1, 2]})
    assert refused["plan"] == first["plan"] and refused["round"] == 1
    assert refused["error"].startswith("item 1 is int")
    second = await run(command={"resume": {"feedback": "Only costs, please"}})
    assert second == {"plan": [{"content": "revised topic 1", "status": "pending"}], "round": 2}
    values = await run(command={"resume": "ok"})
    assert values["final_report"].startswith("#")
    assert values["todos"] == [] and values["plan_reviewed"] is True
    bodies = server.model.requests[before:]
    assert plan_requests(bodies) == 2, "one plan call per round, none repeated on resume"
    researched = [b for b in bodies if role_of(b) == "researcher"]
    assert {message_text(b["messages"][1]) for b in researched} == {"revised topic 1"}
    assert values["searches_used"] == len(server.tavily.queries) - searched == 1


async def test_the_readme_sdk_snippet_replaces_the_plan(
    server: DevServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    snippet = block_after("```python", section("### Reviewing the plan"))
    # The server runs on a free port, not 2024: the snippet finds it as a reader's would.
    assert snippet.count('os.environ.get("DEEP_RESEARCH_SERVER", "http://127.0.0.1:2024")') == 1
    monkeypatch.setenv("DEEP_RESEARCH_SERVER", server.url)
    before = len(server.model.requests)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        await run_with_top_level_await(snippet)
    printed = output.getvalue()
    assert printed.startswith("1 ['heat pump efficiency in cold climates',"), printed
    assert "# Heat pumps in cold climates" in printed, printed
    researched = [b for b in server.model.requests[before:] if role_of(b) == "researcher"]
    topics = {message_text(b["messages"][1]) for b in researched}
    assert topics == {"Heat pump running costs in Oslo", "Heat pump grants in Norway"}
