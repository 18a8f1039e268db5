"""`deep-research doctor` on providers beyond local: and openai:, against local fakes."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from deep_research.cli.doctor.checks import Check
from deep_research.cli.doctor.model_checks import check_model, model_targets
from deep_research.config.settings import load_context
from tests.support.fakes.anthropic_server import FakeAnthropicServer
from tests.support.fakes.ollama_server import FakeOllamaServer
from tests.support.fakes.openai_server import Reply, ToolCall, tools_offered

KEY = "sk-ant-test-SECRET-0123456789abcdef"


def native(body: dict[str, Any]) -> Reply:
    if "ping" in tools_offered(body):
        return Reply(tool_calls=[ToolCall("ping", {"word": "ready"})])
    return Reply("no tool?")


async def checks_for(spec: str) -> list[Check]:
    context = load_context({"orchestrator_model": spec, "researcher_model": spec})
    [target] = [t for t in model_targets(context) if t.spec == spec]
    return await check_model(context, target, timeout=10.0)


async def test_anthropic_is_probed_with_one_tool_call(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropicServer(native) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        [check, result] = await checks_for("anthropic:claude-sonnet-4-5")
    assert check.name == "tool calls (orchestrator, researcher)"
    assert (check.status, check.detail) == ("ok", "native tool calls")
    assert (result.name, result.status) == ("tool result (orchestrator, researcher)", "ok")
    first, exchange = server.requests
    assert [m["role"] for m in exchange["messages"]][-2:] == ["assistant", "user"]
    assert exchange["messages"][-1]["content"][0]["type"] == "tool_result"


async def test_an_anthropic_refusal_is_a_failed_check_without_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refuse = lambda body: Reply(status=401, error_message=f"bad key {KEY}")  # noqa: E731
    with FakeAnthropicServer(refuse) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        [check] = await checks_for("anthropic:claude-sonnet-4-5")
    assert check.status == "fail" and "AuthenticationError" in check.detail
    assert KEY not in check.detail and "check the provider's key" in check.fix


async def test_ollama_not_running_is_a_failed_check(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    [check] = await checks_for("ollama:qwen3:8b")
    assert check.status == "fail" and f"127.0.0.1:{port}" in check.detail
    assert "is the server running?" in check.fix


async def test_ollama_answering_in_text_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllamaServer(lambda body: Reply("I cannot call tools.")) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        [check, result] = await checks_for("ollama:qwen3:8b")
    assert check.status == "warn" and "runs go on with the floor" in check.detail
    assert "ollama show MODEL" in check.fix and "--jinja" not in check.fix
    assert result.status == "ok", "its tool result, sent back as the floor would, is answered"


async def test_an_ollama_reply_cut_off_at_its_limit_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllamaServer(lambda body: Reply("partial", finish_reason="length")) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        [check] = await checks_for("ollama:qwen3:8b")
    assert check.status == "fail" and check.detail.startswith("the model did not stop")


async def test_an_anthropic_reply_cut_off_at_max_tokens_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeAnthropicServer(lambda body: Reply("partial", finish_reason="length")) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        [check] = await checks_for("anthropic:claude-sonnet-4-5")
    assert check.status == "fail" and check.detail.startswith("the model did not stop")
