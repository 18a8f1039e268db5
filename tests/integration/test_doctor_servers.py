"""`deep-research doctor` against scripted servers wearing each local server's face: which
server it found, the fix that fits it, and a setup that fails a run's second call."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.cli.doctor import summary
from deep_research.cli.doctor.checks import Check
from deep_research.cli.doctor.model_checks import check_model, model_targets
from deep_research.config.settings import load_context
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.server_kinds import FACES, Face, FacedServer

PING = ToolCall("ping", {"word": "ready"})
KEY = "sk-local-SECRET-0123456789abcdef"


def point_at(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    monkeypatch.setenv("LLM_BASE_URL", base_url)
    monkeypatch.setenv("LLM_MODEL", "test-model")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")


async def model_checks(timeout: float = 5.0, reply_timeout: float | None = None) -> list[Check]:
    context = load_context({})
    [target] = model_targets(context)
    return await check_model(context, target, timeout, reply_timeout)


def by_name(checks: list[Check], prefix: str) -> Check:
    [check] = [c for c in checks if c.name.startswith(prefix)]
    return check


def in_exchange(body: dict[str, Any]) -> bool:
    """Whether a request carries a tool result or an assistant's tool call: a run's second
    call and every one after it."""
    return any(
        message.get("role") == "tool" or message.get("tool_calls")
        for message in body.get("messages", [])
    )


def refuses_exchanges(status: int, cause: str) -> Any:
    """A server whose model calls the tool, and that refuses every request going on from a
    tool call with `status` and a one-line `cause`: a setup no run gets through."""

    def brain(body: dict[str, Any]) -> Reply:
        if in_exchange(body):
            return Reply(status=status, error_message=cause)
        return Reply(tool_calls=[PING])

    return brain


@pytest.mark.parametrize(
    ("status", "cause"),
    [
        (500, "messages.2.content: Input should be a valid string [input_value=None]"),
        (400, "Unsupported message role: tool"),
    ],
)
async def test_a_server_that_refuses_the_second_call_means_a_run_cannot_succeed(
    monkeypatch: pytest.MonkeyPatch, status: int, cause: str
) -> None:
    with ScriptedOpenAIServer(refuses_exchanges(status, cause)) as llm:
        point_at(monkeypatch, llm.base_url)
        checks = await model_checks()
        asked = llm.requests
    assert by_name(checks, "tool calls").status == "ok", "the one-call probe passes"
    result = by_name(checks, "tool result")
    assert result.status == "fail"
    assert result.detail.startswith("a run cannot succeed: the server refused the second call")
    assert f"HTTP {status}: {cause}" in result.detail
    assert ("content is null" in result.detail) == (status == 500)
    assert summary(checks).startswith("Not ready: 1 check failed")
    assert len(asked) == 2 and in_exchange(asked[1]) and not in_exchange(asked[0])


async def test_a_model_that_stops_on_the_first_call_but_not_the_second_did_not_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def brain(body: dict[str, Any]) -> Reply:
        if in_exchange(body):
            return Reply("ready " * 40, finish_reason="length", completion_tokens=8192)
        return Reply(tool_calls=[PING])

    with ScriptedOpenAIServer(brain) as llm:
        point_at(monkeypatch, llm.base_url)
        checks = await model_checks()
    result = by_name(checks, "tool result")
    assert result.status == "fail" and result.detail.startswith("the model did not stop")
    assert "8192 tokens" in result.detail and "loading" not in result.detail
    assert summary(checks).startswith("Not ready")


async def test_a_second_call_past_the_deadline_did_not_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def brain(body: dict[str, Any]) -> Reply:
        return Reply("going on", delay=3.0) if in_exchange(body) else Reply(tool_calls=[PING])

    with ScriptedOpenAIServer(brain) as llm:
        point_at(monkeypatch, llm.base_url)
        checks = await model_checks(reply_timeout=1.0)
    result = by_name(checks, "tool result")
    assert result.status == "fail"
    assert "no reply within 1 s" in result.detail and "the model did not stop" in result.detail
    assert "loading" not in result.detail


@pytest.mark.parametrize("face", list(FACES))
async def test_doctor_names_the_server_it_found(
    monkeypatch: pytest.MonkeyPatch, face: Face
) -> None:
    with FacedServer(lambda body: Reply(tool_calls=[PING]), face) as llm:
        point_at(monkeypatch, llm.base_url)
        checks = await model_checks()
        base = llm.base_url
    endpoint = by_name(checks, "endpoint")
    names = {
        "llama.cpp": "llama.cpp's llama-server",
        "llama-cpp-python": "llama-cpp-python's server",
        "LM Studio": "LM Studio",
        "vLLM": "vLLM",
        "mlx_lm.server": "mlx_lm.server",
        "Ollama": "Ollama",
    }
    assert endpoint.detail == f"{base} ({names[face]}) answers, serving 1 model"
    assert [c.status for c in checks] == ["ok"] * 4
    assert summary(checks) == "Ready: a run can succeed (0 warnings)."


@pytest.mark.parametrize(
    ("face", "says", "never"),
    [
        ("llama.cpp", "start llama-server with --jinja", "--chat_format"),
        ("llama-cpp-python", "offers tools only to a request that sends tool_choice", "start"),
        ("Ollama", "(`ollama show MODEL`)", "--jinja"),
        ("LM Studio", "LM Studio marks as tool-capable", "--jinja"),
        ("mlx_lm.server", "chat template handles tools", "--jinja"),
        ("vLLM", "--enable-auto-tool-choice", "--jinja"),
    ],
)
async def test_a_model_answering_in_text_warns_with_the_floor_and_this_servers_fix(
    monkeypatch: pytest.MonkeyPatch, face: Face, says: str, never: str
) -> None:
    with FacedServer(lambda body: Reply("Hello! How can I help you today?"), face) as llm:
        point_at(monkeypatch, llm.base_url)
        checks = await model_checks()
        asked = llm.requests
    probe = by_name(checks, "tool calls")
    assert probe.status == "warn"
    assert "runs go on with the floor: the plan dispatched in code" in probe.detail
    assert "reports are mostly quoted passages" in probe.detail
    assert says in probe.fix and never not in probe.fix, probe.fix
    # The floor's exchange (the call made in code, sent back with its result) is tried too.
    assert by_name(checks, "tool result").status == "ok" and in_exchange(asked[-1])
    assert summary(checks) == "Ready: a run can succeed (1 warning)."


async def test_llama_cpp_python_refusing_a_null_content_gets_its_own_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cause = "1 validation error for CreateChatCompletionRequest messages.2.content None"
    with FacedServer(refuses_exchanges(500, cause), "llama-cpp-python") as llm:
        point_at(monkeypatch, llm.base_url)
        checks = await model_checks()
    result = by_name(checks, "tool result")
    assert result.status == "fail"
    assert "; it refuses an assistant message whose content is null: HTTP 500" in result.detail
    assert result.fix.startswith("llama-cpp-python refuses some tool exchanges")
