"""What local OpenAI-compatible servers need, shown on the real request ChatOpenAI sends to a
scripted server on 127.0.0.1: the quirks llama-cpp-python 0.3 showed with a real model
(issue #34), one test each, and how a time-out, a server's error and a cut reply read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, Field

from deep_research.config.settings import Context
from deep_research.llm.chat_models import Role
from deep_research.llm.models import ModelServerError, ReplyTimeoutError, role_model
from deep_research.runtime import progress
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall

# llama-cpp-python's answer to an assistant message whose content is null (FastAPI's list).
NULL_CONTENT_DUMP = {
    "detail": [
        {
            "type": "string_type",
            "loc": ["body", "messages", 2, "typed-dict", "content"],
            "msg": "Input should be a valid string",
            "input": None,
        },
        *(
            {"type": "missing", "loc": ["body", "messages", 2, kind], "msg": "Field required"}
            for kind in ("function", "name", "tool_call_id", "role", "content", "x", "y")
        ),
    ]
}


class web_search(BaseModel):  # noqa: N801 - the tool's name as the model sees it
    """Search the web; each query is one search."""

    queries: list[str] = Field(min_length=1, description="1-4 queries")


SEARCH = ToolCall("web_search", {"queries": ["EU battery recycling"]})
TURN = [SystemMessage("You research."), HumanMessage("Battery recycling in the EU")]
# A second turn as a run sends it: the model's tool call (no text) and the tool's answer.
SECOND_TURN = [
    *TURN,
    AIMessage("", tool_calls=[{"name": "web_search", "args": {"queries": ["q"]}, "id": "c1"}]),
    ToolMessage("results", tool_call_id="c1"),
]


@pytest.fixture
def script() -> list[Reply]:
    """Replies the server gives in turn; once used up, a search call."""
    return []


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, script: list[Reply]) -> Iterator[ScriptedOpenAIServer]:
    def brain(body: dict[str, Any]) -> Reply:
        return script.pop(0) if script else Reply(tool_calls=[SEARCH])

    with ScriptedOpenAIServer(brain) as running:
        monkeypatch.setenv("LLM_BASE_URL", running.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.delenv("LLM_MAX_TOKENS", raising=False)
        monkeypatch.delenv("LLM_TIMEOUT", raising=False)
        yield running


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The progress events sent, as a graph run's stream would carry them."""
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(progress, "get_stream_writer", lambda: sent.append)
    return sent


def named(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [event for event in events if event["event"] == name]


@pytest.mark.parametrize(
    ("role", "limit"), [("clarifier", 2048), ("researcher", 4096), ("orchestrator", 4096)]
)
async def test_the_completion_limit_goes_as_max_tokens_sized_for_the_role(
    server: ScriptedOpenAIServer, role: Role, limit: int
) -> None:
    # llama-cpp-python reads only `max_tokens`: with `max_completion_tokens` alone one tool
    # argument ran to the end of its 8k context.
    await role_model(Context(), role).ask(TURN, [web_search])
    [body] = server.requests
    assert body["max_tokens"] == limit and body["max_completion_tokens"] == limit


async def test_no_message_is_sent_with_null_content(server: ScriptedOpenAIServer) -> None:
    # llama-cpp-python refuses the request (HTTP 500) when the assistant's content is null,
    # which langchain-openai sends beside tool calls.
    await role_model(Context(), "researcher").ask(SECOND_TURN, [web_search])
    [body] = server.requests
    assistant = [m for m in body["messages"] if m["role"] == "assistant"]
    assert assistant and assistant[0]["tool_calls"], "the tool call itself is still sent"
    assert all(message["content"] is not None for message in body["messages"])


async def test_a_time_out_is_called_a_time_out_and_each_retry_is_seen(
    server: ScriptedOpenAIServer,
    script: list[Reply],
    events: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLM_TIMEOUT", "0.5")
    monkeypatch.setenv("LLM_MAX_RETRIES", "1")
    script.extend([Reply(tool_calls=[SEARCH], delay=2.0)] * 2)
    with pytest.raises(ReplyTimeoutError) as raised:
        await role_model(Context(), "researcher").ask(TURN, [web_search])
    message = str(raised.value)
    assert "did not answer within 0.5 s (LLM_TIMEOUT), 2 attempts" in message
    assert server.base_url in message and "Cannot reach" not in message
    assert "Start an OpenAI-compatible server" not in message
    assert len(server.requests) == 2
    [retry] = named(events, "model_retry")
    assert (retry["reason"], retry["attempt"], retry["role"]) == ("timeout", 2, "researcher")


async def test_a_server_error_is_retried_seen_and_then_answered(
    server: ScriptedOpenAIServer,
    script: list[Reply],
    events: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLM_MAX_RETRIES", "2")
    script.append(Reply(status=503, error_message="loading model"))
    reply = await role_model(Context(), "researcher").ask(TURN, [web_search])
    assert [call["name"] for call in reply.tool_calls] == ["web_search"]
    [retry] = named(events, "model_retry")
    assert retry["reason"] == "server_error" and "HTTP 503: loading model" in retry["error"]


async def test_a_servers_validation_dump_becomes_one_line_naming_its_cause(
    server: ScriptedOpenAIServer, script: list[Reply]
) -> None:
    script.append(Reply(status=422, error_body=NULL_CONTENT_DUMP))
    with pytest.raises(ModelServerError) as raised:
        await role_model(Context(), "researcher").ask(TURN, [web_search])
    message = str(raised.value)
    assert "\n" not in message and len(message) < 500
    assert "HTTP 422: body.messages.2.typed-dict.content: Input should be a valid string" in message
    assert "(and 7 more)" in message and "content is null" in message


async def test_a_cut_tool_call_is_asked_again_once_and_seen(
    server: ScriptedOpenAIServer, script: list[Reply], events: list[dict[str, Any]]
) -> None:
    cut = ToolCall("web_search", '{"queries": ["EU battery recycl')
    script.append(Reply(tool_calls=[cut], finish_reason="length", completion_tokens=4096))
    reply = await role_model(Context(), "researcher").ask(TURN, [web_search])
    assert reply.tool_calls[0]["args"] == {"queries": ["EU battery recycling"]}
    assert len(server.requests) == 2
    [cut_event] = named(events, "reply_cut")
    assert cut_event == {
        "event": "reply_cut",
        "role": "researcher",
        "model": Context().researcher_model,
        "tokens_out": 4096,
        "outcome": "retried",
    }
    [retry] = named(events, "model_retry")
    assert (retry["reason"], retry["attempt"]) == ("cut", 2)


async def test_a_cut_report_is_kept_marked_as_cut(
    server: ScriptedOpenAIServer, script: list[Reply], events: list[dict[str, Any]]
) -> None:
    script.append(Reply(content="# Report\n\nThe EU recycled", finish_reason="length"))
    reply = await role_model(Context(), "orchestrator").ask(TURN, [web_search])
    assert reply.response_metadata["finish_reason"] == "length"  # the node can see it
    assert len(server.requests) == 1, "a report is not asked again"
    [cut_event] = named(events, "reply_cut")
    assert cut_event["outcome"] == "kept" and cut_event["role"] == "orchestrator"


async def test_a_tool_call_read_from_text_is_reported_as_a_repair(
    server: ScriptedOpenAIServer, script: list[Reply], events: list[dict[str, Any]]
) -> None:
    script.append(Reply(content='web_search({"queries": ["EU battery recycling"]})'))
    reply = await role_model(Context(), "researcher").ask(TURN, [web_search])
    assert reply.tool_calls
    [repair] = named(events, "model_repaired")
    assert "read from the reply's text (web_search)" in repair["repair"]


async def test_time_outs_cut_short_by_the_call_deadline_are_still_called_time_outs(
    server: ScriptedOpenAIServer, script: list[Reply], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_TIMEOUT", "0.5")
    monkeypatch.setenv("LLM_MAX_RETRIES", "1")
    monkeypatch.setenv("LLM_CALL_DEADLINE", "1.2")  # ends the second attempt before its read
    script.extend([Reply(tool_calls=[SEARCH], delay=3.0)] * 2)
    with pytest.raises(ReplyTimeoutError, match=r"within 0\.5 s \(LLM_TIMEOUT\), 2 attempts"):
        await role_model(Context(), "researcher").ask(TURN, [web_search])
