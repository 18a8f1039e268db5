"""A follow-up through the MCP tool: the real `mcp` client against `/mcp` on a real
`langgraph dev`, the scripted model and fake Tavily behind it (#39).

A call's report ends with its `thread`; a new question with that `thread` is a follow-up
on the finished research: answered from its sources without a search, or researching only
what is missing, within the first call's search cap (which the follow-up did not repeat).
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from tests.support.brain import LINK, _texts, role_of
from tests.support.follow_up_brain import (
    ANSWERED,
    FIRST_TOPICS,
    MISSING,
    MISSING_TOPICS,
    FollowUpBrain,
)
from tests.support.langgraph_dev import DevServer
from tests.support.readme import block_after, run_with_top_level_await, section

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"
BRAIN = FollowUpBrain  # behind the module's `server`
THREAD = re.compile(r"^thread: (\S+) \(call deep_research", re.MULTILINE)


async def call(url: str, **arguments: object) -> CallToolResult:
    async with Client(url) as client:
        return await client.call_tool("deep_research", arguments)


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent), result
    return block.text


def researched(server: DevServer, since: int) -> list[str]:
    bodies = server.model.requests[since:]
    return [_texts(b, "user")[0] for b in bodies if role_of(b) == "researcher"]


async def test_a_follow_up_on_the_returned_thread_starts_from_what_it_read(
    server: DevServer,
) -> None:
    first = await call(server.mcp_url, question=QUESTION, max_searches=3)
    assert not first.is_error, first
    [thread] = THREAD.findall(text_of(first))
    assert len(server.tavily.requests) == 2

    asked = len(server.model.requests)
    answered = await call(server.mcp_url, question=ANSWERED, thread=thread)
    assert not answered.is_error, answered
    assert len(server.tavily.requests) == 2, "a follow-up its sources answer sends no search"
    assert researched(server, asked) == []
    report = text_of(answered)
    assert report.lstrip().startswith("#") and THREAD.findall(report) == [thread]
    assert set(LINK.findall(report)) <= server.tavily.returned_urls

    asked = len(server.model.requests)
    missing = await call(server.mcp_url, question=MISSING, thread=thread)
    assert not missing.is_error, missing
    topics = researched(server, asked)
    assert topics and set(topics) <= set(MISSING_TOPICS) and not set(topics) & set(FIRST_TOPICS)
    # The first call's cap of 3 is the thread's: 2 spent, 1 left, though not passed again.
    assert len(server.tavily.requests) == 3
    assert any(t in server.tavily.queries[-1] for t in MISSING_TOPICS)


async def test_a_thread_this_tool_did_not_return_is_refused(server: DevServer) -> None:
    import httpx

    unknown = await call(server.mcp_url, question=ANSWERED, thread="no-such-thread")
    assert unknown.is_error and "No research thread 'no-such-thread'" in text_of(unknown)
    # A thread of another client (Studio, the SDK) on the same server is not this tool's.
    async with httpx.AsyncClient(base_url=server.url) as client:
        other = (await client.post("/threads", json={"metadata": {}})).json()["thread_id"]
    refused = await call(server.mcp_url, question=ANSWERED, thread=other)
    assert refused.is_error and "No research thread" in text_of(refused)
    both = await call(server.mcp_url, question=ANSWERED, thread=other, clarify=True)
    assert both.is_error and "leave `clarify` false" in text_of(both)
    bad = await call(server.mcp_url, question=ANSWERED, thread="../x")
    assert bad.is_error and "thread" in text_of(bad)


async def test_the_sdk_follow_up_snippet_runs_after_the_first_on_its_thread(
    server: DevServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/agent-server.md: its first snippet, then its follow-up on the same thread."""
    page = section("# Through the Agent Server and Studio")
    first, follow_up = block_after("```python", page), block_after("<!-- sdk-follow-up", page)
    monkeypatch.setenv("DEEP_RESEARCH_SERVER", server.url)
    names: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        await run_with_top_level_await(first, names)
    searched, asked = len(server.tavily.requests), len(server.model.requests)
    assert searched, "the first question was researched"
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        await run_with_top_level_await(follow_up, names)
    assert len(server.tavily.requests) == searched, "answered from the thread: no search"
    assert researched(server, asked) == []
    cited = set(LINK.findall(output.getvalue()))
    assert cited and cited <= server.tavily.returned_urls, output.getvalue()
