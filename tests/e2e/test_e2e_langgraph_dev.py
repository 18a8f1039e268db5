"""End to end: a real `langgraph dev` server runs the graph against the scripted fakes.

The server comes from `tests.support.langgraph_dev` (an explicit environment, no `.env`).
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from tests.support.brain import LINK, role_of
from tests.support.fakes.openai_server import message_text, system_text
from tests.support.langgraph_dev import ASSISTANT, DevServer
from tests.support.readme import block_after, run_with_top_level_await, section

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"
ANSWER = "Nordic climate, homes"
RUN_TIMEOUT = 120.0


async def current_interrupt(client: LangGraphClient, thread_id: str) -> dict[str, Any]:
    state = await client.threads.get_state(thread_id)
    interrupts = list(state["interrupts"])
    from_tasks = [i for task in state["tasks"] for i in task["interrupts"]]
    assert len(interrupts) == 1, state
    assert [i["id"] for i in from_tasks] == [interrupts[0]["id"]]
    value: dict[str, Any] = interrupts[0]["value"]
    return value


def mentions(body: dict[str, Any], text: str) -> bool:
    return any(text in message_text(m) for m in body.get("messages") or [])


async def test_clarify_resume_and_report_through_langgraph_dev(server: DevServer) -> None:
    client = get_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)
    thread_id = (await client.threads.create())["thread_id"]

    async def run(**kwargs: Any) -> None:
        await client.runs.wait(thread_id, ASSISTANT, raise_error=True, **kwargs)

    user = {"role": "user", "content": QUESTION}
    await run(input={"messages": [user]})
    first = await current_interrupt(client, thread_id)
    assert first["round"] == 1
    assert isinstance(first["questions"], list) and first["questions"]
    assert "error" not in first

    await run(command={"resume": 42})
    retry = await current_interrupt(client, thread_id)
    assert retry["questions"] == first["questions"]
    assert retry["round"] == 1
    assert isinstance(retry["error"], str) and retry["error"]

    await run(command={"resume": {"answer": ANSWER}})
    state = await client.threads.get_state(thread_id)
    assert not state["next"] and not state["interrupts"], state
    values = state["values"]
    assert isinstance(values, dict)
    report = values["final_report"]
    assert isinstance(report, str) and report.lstrip().startswith("#"), report
    cited = LINK.findall(report)
    assert len(set(cited)) >= 2, report
    assert set(cited) <= server.tavily.returned_urls, report
    last = values["messages"][-1]
    assert last["type"] == "ai" and last["content"] == report

    clarifier = [body for body in server.model.requests if role_of(body) == "clarifier"]
    assert clarifier, "the clarifier model was never called"
    assert len([body for body in clarifier if not mentions(body, "Nordic")]) == 1


async def test_context_schema_describes_every_field(server: DevServer) -> None:
    client = get_client(url=server.url, api_key=None)
    # Runs accept the graph id, but the schemas endpoint wants the assistant's UUID.
    [assistant] = await client.assistants.search(graph_id=ASSISTANT)
    schemas = await client.assistants.get_schemas(assistant["assistant_id"])
    context_schema = schemas["context_schema"]
    assert context_schema is not None, schemas
    properties: dict[str, dict[str, Any]] = context_schema["properties"]
    assert "max_searches_per_run" in properties
    undescribed = [name for name, prop in properties.items() if not prop.get("description")]
    assert not undescribed, f"context fields without a description: {undescribed}"


async def test_the_readme_api_snippet_runs_as_written_and_keeps_its_context_on_resume(
    server: DevServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    snippet = block_after("```python", section("### Through the Agent Server and Studio"))
    # The server runs on a free port, not 2024: the snippet finds it as a reader's would.
    assert snippet.count('os.environ.get("DEEP_RESEARCH_SERVER", "http://127.0.0.1:2024")') == 1
    monkeypatch.setenv("DEEP_RESEARCH_SERVER", server.url)
    before = len(server.model.requests)  # the server (and its fakes) serve the whole module
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        await run_with_top_level_await(snippet)
    printed = output.getvalue()
    assert "Which climate zone?" in printed, "the clarifying questions are printed"
    cited = set(LINK.findall(printed))
    assert cited and cited <= server.tavily.returned_urls, printed
    bodies = server.model.requests[before:]
    orchestrator = [body for body in bodies if role_of(body) == "orchestrator"]
    assert orchestrator, "the resumed run reached the orchestrator"
    # The snippet's context (a cap of 15, not the default 25) reaches the resumed run too.
    assert all("15 searches" in system_text(body) for body in orchestrator)


async def test_cloud_role_without_its_key_fails_the_run_before_a_checkpoint(
    server: DevServer,
) -> None:
    client = get_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)
    thread_id = (await client.threads.create())["thread_id"]
    calls_before = len(server.model.requests)
    user = {"role": "user", "content": QUESTION}
    with pytest.raises(Exception, match="ConfigError: .*needs OPENAI_API_KEY") as error:
        await client.runs.wait(
            thread_id,
            ASSISTANT,
            input={"messages": [user]},
            context={"researcher_model": "openai:gpt-4.1"},
        )
    assert len(str(error.value).splitlines()) == 1
    state = await client.threads.get_state(thread_id)
    assert state["checkpoint"] is None and not state["values"], state
    assert len(server.model.requests) == calls_before, "no model was called"


async def test_concurrent_threads_each_keep_their_own_search_cap(server: DevServer) -> None:
    """Three threads at once, cap 1 each, two research topics each: one search per thread."""
    client = get_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)
    before = len(server.tavily.queries)  # the fake serves the whole module
    context = {"allow_clarification": False, "max_searches_per_run": 1}
    user = {"role": "user", "content": QUESTION}
    threads = [(await client.threads.create())["thread_id"] for _ in range(3)]
    runs = [
        await client.runs.create(thread, ASSISTANT, input={"messages": [user]}, context=context)
        for thread in threads
    ]
    for thread, run in zip(threads, runs, strict=True):
        await client.runs.join(thread, run["run_id"])
    counted = [
        (await client.threads.get_state(thread))["values"]["searches_used"] for thread in threads
    ]
    assert counted == [1, 1, 1]
    assert len(server.tavily.queries) - before == 3, server.tavily.queries
