"""llm/sending.py: one request to a role's model: fitted, scrubbed, under its deadline."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from langchain_core.exceptions import ContextOverflowError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from deep_research.llm import attempts, sending, slots
from deep_research.llm.errors import ModelDeadlineError
from deep_research.llm.sending import Sender
from tests.support.scripted_model import ScriptedChatModel


def sender(model: BaseChatModel, deadline: float = 30.0) -> Sender:
    return Sender(model, "http://127.0.0.1:9/v1", "researcher", "local:m", deadline)


async def test_a_request_too_long_for_the_context_is_sent_again_shorter() -> None:
    seen: list[int] = []

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        seen.append(sum(len(m.text) for m in messages))
        if seen[-1] > 5_000:
            raise ContextOverflowError("this model's maximum context length is 2048 tokens")
        return AIMessage("fits")

    reply, sent = await sender(ScriptedChatModel(script=script))._fitted(
        [HumanMessage("x" * 8_000), HumanMessage("the question")], ()
    )
    assert reply.text == "fits" and seen[0] > 5_000 > seen[-1] and len(seen) >= 2
    assert sent[-1].text == "the question", "the short last message stays whole"


async def test_a_secret_in_a_message_never_reaches_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-secret-value-1234567890")
    seen: list[str] = []

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        seen.extend(m.text for m in messages)
        return AIMessage("ok")

    await sender(ScriptedChatModel(script=script))._call(
        [HumanMessage("the search failed: bad key tvly-secret-value-1234567890")], ()
    )
    assert seen and not any("secret-value" in text for text in seen)


async def test_tool_calls_sent_back_keep_their_arguments_but_no_lone_surrogate() -> None:
    """A reply's tool calls go back as the model made them, an argument named like a
    secret (an MCP tool's `page_token`) included; only a lone surrogate, which no request's
    UTF-8 carries, becomes U+FFFD, in keys and values, and in a call that was invalid."""
    seen: list[BaseMessage] = []

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        seen.extend(messages)
        return AIMessage("ok")

    call = {
        "name": "search",
        "args": {"page_token": "abc", "q\ud83d": ["x\udc00"]},
        "id": "1\ud83d",
    }
    invalid = {"name": "search", "args": '{"q": "\ud83d', "id": "2", "error": "cut"}
    reply = AIMessage("", tool_calls=[call], invalid_tool_calls=[invalid])
    await sender(ScriptedChatModel(script=script))._call([HumanMessage("q"), reply], ())
    sent = seen[1]
    assert isinstance(sent, AIMessage)
    assert sent.tool_calls[0]["args"] == {"page_token": "abc", "q\ufffd": ["x\ufffd"]}
    assert sent.tool_calls[0]["id"] == "1\ufffd"
    assert sent.invalid_tool_calls[0]["args"] == '{"q": "\ufffd'
    assert reply.tool_calls[0]["args"]["page_token"] == "abc", "the state's copy is not changed"


class _Stalled(BaseChatModel):
    """A model server that never finishes its reply."""

    @property
    def _llm_type(self) -> str:
        return "stalled"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        raise NotImplementedError

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        await asyncio.sleep(30)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("late"))])


async def test_a_call_past_its_deadline_is_one_readable_error() -> None:
    with pytest.raises(
        ModelDeadlineError, match="within 0.2 s, retries included.*LLM_CALL_DEADLINE"
    ):
        await sender(_Stalled(), deadline=0.2)._call([HumanMessage("q")], ())


async def test_a_turn_waited_for_at_a_one_slot_server_is_not_counted_against_the_deadline() -> None:
    """The wait is a queue, not the call: a lane that waits longer than the deadline for
    another lane's turn still gets its answer."""
    one_slot = dataclasses.replace(
        sender(ScriptedChatModel(script=lambda m, t: AIMessage("answered")), deadline=0.3),
        endpoint="http://127.0.0.1:9/deadline",
        one_slot="on",
    )
    gate = slots.gate(one_slot.endpoint, one_slot.spec)
    async with slots.in_lane("a"):
        await one_slot._call([HumanMessage("a's call")], ())  # a holds the server now
        asyncio.get_running_loop().call_later(0.6, gate.lane_ended, "a")
        async with slots.in_lane("b"):
            reply = await asyncio.wait_for(one_slot._call([HumanMessage("b's call")], ()), 5)
    assert reply.text == "answered"


@pytest.mark.parametrize("count", [10**400, -50, True, "12", 1.5, None])
def test_a_token_count_a_server_made_up_is_not_believed(count: object) -> None:
    reply = AIMessage(
        "x", usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    )
    assert sending._completion_tokens(reply) == 1  # what a server says, believed
    reply.usage_metadata["output_tokens"] = count  # type: ignore[index, typed-dict-item]
    assert sending._completion_tokens(reply) == 0


async def test_a_retried_call_says_nothing_of_the_server_a_clean_one_is_timed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A retry's back-off is in the call's time: judged as one answer, a parallel server's
    retried call would read as queued behind another (llm/slots.py)."""
    monkeypatch.setattr(attempts, "BACKOFF_SECONDS", 0.0)
    usage = {"input_tokens": 30, "output_tokens": 12, "total_tokens": 42}
    failed: list[bool] = []

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        if not failed and messages[-1].text == "retried":
            failed.append(True)
            raise ConnectionError("the server restarted")
        return AIMessage("answered", usage_metadata=usage)

    watched = dataclasses.replace(
        sender(ScriptedChatModel(script=script)),
        endpoint="http://127.0.0.1:9/retried",
        one_slot="auto",
        retries=1,
    )
    timed = slots.gate(watched.endpoint, watched.spec)._done
    await watched._call([HumanMessage("clean")], ())
    assert [(c.tokens, c.prompt) for c in timed] == [(12, 30)]
    await watched._call([HumanMessage("retried")], ())
    assert failed and len(timed) == 1, "the retried call is not among the timed ones"
