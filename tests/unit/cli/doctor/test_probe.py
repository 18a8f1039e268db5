"""`cli.doctor.probe`, in process: how each reply and failure of the two-call tool exchange
is read. Whole probes against scripted servers are in tests/integration/test_doctor*.py."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, ToolMessage

from deep_research.cli.doctor import probe as pr
from deep_research.cli.doctor.probe import Probed

LOCAL = Probed("clarifier, researcher", "http://here", "llama.cpp", listed=True, local=True)
CLOUD = Probed("orchestrator", "http://cloud")
NATIVE = AIMessage("", tool_calls=[{"name": "ping", "args": {"word": "x"}, "id": "1"}])


@pytest.mark.parametrize(
    "metadata",
    [{"finish_reason": "length"}, {"stop_reason": "max_tokens"}, {"done_reason": "length"}],
)
def test_a_reply_run_to_its_limit_in_any_providers_words_is_a_model_that_did_not_stop(
    metadata: dict[str, str],
) -> None:
    usage = {"input_tokens": 30, "output_tokens": 8192, "total_tokens": 8222}
    reply = AIMessage("", response_metadata=metadata, usage_metadata=usage)  # type: ignore[arg-type]
    check = pr.classify(reply, "l")
    assert check.status == "fail"
    assert check.detail.startswith("the model did not stop: its reply to a one-line probe")
    assert "8192 tokens, finish_reason=length" in check.detail
    assert "loading" not in check.detail and "stop token" in check.fix


def test_each_kind_of_reply_is_told_apart() -> None:
    written = AIMessage('<tool_call>{"name": "ping", "arguments": {"word": "x"}}</tool_call>')
    assert pr.classify(NATIVE, "l").detail == "native tool calls"
    assert "written as text" in pr.classify(written, "l").detail
    assert pr.classify(AIMessage("<think>hm</think>"), "l").detail.startswith("empty")
    text = pr.classify(AIMessage("<think>x</think>pong sk-proj-abcdefghijklmnop1234"), "l")
    assert text.status == "warn" and "'pong " in text.detail and "abcdefgh" not in text.detail


def test_a_text_reply_warns_with_the_floor_and_what_it_costs() -> None:
    check = pr.classify(AIMessage("Sure, I can help."), "l", again=True)
    assert check.status == "warn"
    assert "('Sure, I can help.', twice): runs go on with the floor" in check.detail
    for said in (
        "the plan dispatched in code",
        "one search per topic in code",
        "the passages read quoted into the report",
        "only as good as the topic text (no model-chosen queries)",
        "reports are mostly quoted passages",
    ):
        assert said in check.detail, said


@pytest.mark.parametrize(
    ("kind", "says", "never"),
    [
        ("llama.cpp", "start llama-server with --jinja", "chat_format"),
        ("llama-cpp-python", "has no --jinja, and its --chat_format chatml-function-calling", ""),
        ("Ollama", "ollama show MODEL", "--jinja"),
        ("LM Studio", "LM Studio marks as tool-capable", "--jinja"),
        ("mlx_lm.server", "mlx-community/Qwen3-8B-4bit", "--jinja"),
        ("vLLM", "--enable-auto-tool-choice", "--jinja"),
    ],
)
def test_the_fix_for_a_text_reply_is_the_one_for_the_server_found(
    kind: Any, says: str, never: str
) -> None:
    fix = pr.classify(AIMessage("no"), "l", kind).fix
    assert says in fix, fix
    assert not never or never not in fix


async def test_a_cloud_model_gets_no_servers_flags_and_a_local_one_its_servers() -> None:
    assert pr.classify(AIMessage("t"), "l", "cloud").fix == "use a model with tool calling"
    [cloud, _] = await pr.probe(_Scripted(lambda m: AIMessage("t")), CLOUD, 1)
    [local, _] = await pr.probe(_Scripted(lambda m: AIMessage("t")), LOCAL, 1)
    assert cloud.fix == "use a model with tool calling"
    assert local.fix.startswith("start llama-server with --jinja")


def test_the_reply_to_a_second_ask_says_so() -> None:
    assert pr.classify(NATIVE, "l", again=True).detail == (
        "native tool calls (when asked again, as a run would)"
    )
    empty = pr.classify(AIMessage(""), "l", again=True)
    assert empty.status == "warn" and empty.detail.startswith("empty reply, also after the nudge")
    assert "twice" not in pr.classify(AIMessage("no"), "l").detail


def status_error(status: int, message: str) -> openai.APIStatusError:
    response = httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    return openai.APIStatusError(message, response=response, body=None)


def test_each_status_error_names_its_fix() -> None:
    jinja = status_error(500, "Jinja templates are off")
    assert pr._status_fix(jinja) == "start llama-server with --jinja"
    assert "LLM_API_KEY" in pr._status_fix(status_error(401, "no"))
    assert "LLM_MODEL" in pr._status_fix(status_error(404, "no"))
    assert pr._status_fix(status_error(500, "no")) == "check the server log"


def test_a_refused_second_call_says_a_run_cannot_succeed_and_names_a_null_content() -> None:
    dump = "1 validation error\nmessages.2.content\n  Input should be a valid string [None]"
    check = pr._refused_exchange("l", "llama-cpp-python", f"HTTP 500: {dump}")
    assert check.status == "fail" and check.detail.startswith("a run cannot succeed")
    assert "; it refuses an assistant message whose content is null: HTTP 500" in check.detail
    assert "\n" not in check.detail and "no --chat_format" in check.fix
    plain = pr._refused_exchange("l", None, "HTTP 400: bad template")
    assert "content is null" not in plain.detail and "check the server log" in plain.fix


class _Scripted:
    """A chat model stand-in: replies from `answer(messages)`, after `sleep` seconds."""

    def __init__(self, answer: Any = None, sleep: float = 0, error: Exception | None = None):
        self.answer, self.sleep, self.error = answer, sleep, error
        self.asked: list[list[Any]] = []

    def bind_tools(self, tools: list[Any]) -> _Scripted:
        return self

    async def ainvoke(self, messages: list[Any]) -> AIMessage:
        self.asked.append(messages)
        await asyncio.sleep(self.sleep)
        if self.error:
            raise self.error
        return self.answer(messages) if self.answer else NATIVE


async def test_the_probe_sends_the_tool_call_back_with_its_result_and_reads_the_answer() -> None:
    model = _Scripted(lambda m: NATIVE if len(m) == 2 else AIMessage("The tool said ready."))
    first, second = await pr.probe(model, LOCAL, 1)
    assert (first.status, second.status) == ("ok", "ok")
    assert second.name == "tool result (clarifier, researcher)"
    sent = model.asked[1]
    assert [type(m).__name__ for m in sent[2:]] == ["AIMessage", "ToolMessage"]
    assert sent[2].content == "" and sent[2].tool_calls[0]["name"] == "ping"
    assert isinstance(sent[3], ToolMessage) and sent[3].tool_call_id == "1"


async def test_a_model_that_never_calls_still_gets_the_floors_exchange() -> None:
    model = _Scripted(lambda m: AIMessage("no" if len(m) < 5 else "fine"))
    checks = await pr.probe(model, LOCAL, 1)
    assert [c.status for c in checks] == ["warn", "ok"]
    assert model.asked[-1][-2].tool_calls[0]["args"] == {"word": "ready"}


@pytest.mark.parametrize(
    ("target", "loading"),
    [
        (LOCAL, False),
        (Probed("r", "http://here", "llama-cpp-python", listed=True), False),
        (Probed("r", "http://here", "mlx_lm.server", listed=True), True),
    ],
)
async def test_a_probe_past_its_deadline_is_a_model_that_did_not_stop(
    target: Probed, loading: bool
) -> None:
    [late] = await pr.probe(_Scripted(sleep=1), target, 0.05)
    assert late.status == "fail" and "no reply within 0.05 s" in late.detail
    assert "the model did not stop" in late.detail
    assert ("loading the model" in late.detail) == loading, late.detail
    assert "--timeout" in late.fix


async def test_a_probe_reads_other_clients_errors() -> None:
    # A key that straddles the cut: redacted first, or half of it would be left behind.
    odd = ValueError("said\n" + "x" * 186 + " sk-proj-abcdefghijklmnop1234")
    [other] = await pr.probe(_Scripted(error=odd), CLOUD, 1)
    assert other.detail.startswith("http://cloud: ValueError: said xxx")
    assert "sk-proj" not in other.detail
    [cloud_late] = await pr.probe(_Scripted(sleep=1), CLOUD, 0.05)
    assert cloud_late.detail == "no reply from http://cloud within 0.05 s"
