"""`deep-research doctor`'s model checks against the scripted model server on 127.0.0.1, in
each of its modes: tool calls native, written as text, dropped or never stopping, wrong
names, servers down or slow, and keys that never show."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from deep_research.cli.doctor import REPLY_DEADLINE, doctor_parser
from deep_research.cli.doctor.checks import (
    Check,
)
from deep_research.cli.doctor.model_checks import check_model, model_targets
from deep_research.cli.main import main
from deep_research.config.settings import load_context
from deep_research.llm.chat_models import chat_model
from tests.support.doctor import KEY, PING, native, point_at
from tests.support.fakes.http_server import closed_port
from tests.support.fakes.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    last_user_text,
    tools_offered,
)
from tests.support.small_brain import NUDGE_MARKER, Mode, render

# A key of no known shape: only its value can give it away.
PLAIN_KEY = "localkey-ABCDEFGHIJ-0123456789"


async def model_checks(timeout: float = 5.0, **settings: Any) -> list[Check]:
    context = load_context(settings)
    return [
        check
        for target in model_targets(context)
        for check in await check_model(context, target, timeout)
    ]


def by_name(checks: list[Check], prefix: str) -> Check:
    [check] = [c for c in checks if c.name.startswith(prefix)]
    return check


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The scripted model server answering with `request.param` (a Brain); env points at it."""
    with ScriptedOpenAIServer(request.param) as llm:
        point_at(monkeypatch, llm.base_url)
        yield llm


@pytest.mark.parametrize("server", [native], indirect=True)
async def test_native_tool_calls_pass_with_one_probe_for_roles_sharing_a_model(
    server: ScriptedOpenAIServer,
) -> None:
    checks = await model_checks()
    assert [c.status for c in checks] == ["ok", "ok", "ok", "ok"]
    assert by_name(checks, "tool calls").detail == "native tool calls"
    assert by_name(checks, "tool result").detail == (
        "answered after the tool result, as a run's second call must"
    )
    assert by_name(checks, "endpoint").name == "endpoint (clarifier, orchestrator, researcher)"
    assert "test-model is served" in by_name(checks, "model name").detail
    probe, exchange = server.requests
    assert [m["role"] for m in probe["messages"]] == ["system", "user"]
    assert tools_offered(probe) == tools_offered(exchange) == {"ping"}
    assert probe["model"] == "test-model"
    run = chat_model(load_context({}), "clarifier")
    limit = getattr(run, "max_tokens", None)
    assert limit and probe["max_completion_tokens"] == probe["max_tokens"] == limit, "as a run asks"
    # The second call is a run's second: the model's own call sent back with its result.
    assert [m["role"] for m in exchange["messages"]] == ["system", "user", "assistant", "tool"]
    [call] = exchange["messages"][2]["tool_calls"]
    assert call["function"]["name"] == "ping" and call["id"] == "call_1"
    assert exchange["messages"][3]["tool_call_id"] == "call_1"


@pytest.mark.parametrize("server", [native], indirect=True)
async def test_roles_with_different_models_are_each_probed_and_named(
    server: ScriptedOpenAIServer,
) -> None:
    checks = await model_checks(researcher_model="local:test-model-b")
    names = [c.name for c in checks if c.name.startswith("tool calls")]
    assert names == ["tool calls (clarifier, orchestrator)", "tool calls (researcher)"]
    asked = sorted(body["model"] for body in server.requests)
    assert asked == ["test-model"] * 2 + ["test-model-b"] * 2, "two calls each"
    assert by_name(checks, "model name (researcher)").status == "warn"


@pytest.mark.parametrize("mode", ["json", "call", "hermes", "fenced", "think"])
async def test_tool_calls_written_as_text_pass_as_salvaged(
    monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    with ScriptedOpenAIServer(lambda body: Reply(render([PING], mode))) as llm:
        point_at(monkeypatch, llm.base_url)
        probe = by_name(await model_checks(), "tool calls")
    assert probe.status == "ok"
    assert probe.detail == "tool calls written as text (the agent salvages these)"


@pytest.mark.parametrize("server", [lambda body: Reply("")], indirect=True)
async def test_an_empty_reply_warns_that_a_tool_call_was_dropped(
    server: ScriptedOpenAIServer,
) -> None:
    probe = by_name(await model_checks(), "tool calls")
    assert probe.status == "warn"
    assert probe.detail.startswith("empty reply, also after the nudge a run sends")
    assert "Failed to parse tool call" in probe.fix
    first, nudged, exchange = server.requests
    assert NUDGE_MARKER in last_user_text(nudged) and NUDGE_MARKER not in last_user_text(first)
    assert [m["role"] for m in exchange["messages"]][-2:] == ["assistant", "tool"]


@pytest.mark.parametrize("server", [lambda body: Reply("Sure, I can help.")], indirect=True)
async def test_a_reply_without_any_tool_use_warns_and_quotes_it(
    server: ScriptedOpenAIServer,
) -> None:
    probe = by_name(await model_checks(), "tool calls")
    assert probe.status == "warn"
    assert "('Sure, I can help.', twice): runs go on with the floor" in probe.detail
    assert probe.fix.startswith("use a model with tool calling"), "a server of no known kind"
    first, again, _ = server.requests
    assert [m["role"] for m in again["messages"]] == ["system", "user", "assistant", "user"]
    assert again["messages"][2]["content"] == "Sure, I can help."
    assert tools_offered(again) == {"ping"} and len(first["messages"]) == 2


def answers_on_the_second_ask(first: str, mode: Mode | None) -> Any:
    """A model that misses a one-line probe with `first`, then calls `ping` when asked again
    (natively when `mode` is None, else written as text in that mode)."""

    def brain(body: dict[str, Any]) -> Reply:
        if len(body["messages"]) == 2 and NUDGE_MARKER not in last_user_text(body):
            return Reply(first)
        return Reply(tool_calls=[PING]) if mode is None else Reply(render([PING], mode))

    return brain


@pytest.mark.parametrize("mode", [None, "call", "hermes", "think"])
@pytest.mark.parametrize("first", ["", "ready"])
async def test_a_model_that_calls_the_tool_when_asked_again_passes(
    monkeypatch: pytest.MonkeyPatch, first: str, mode: Mode | None
) -> None:
    with ScriptedOpenAIServer(answers_on_the_second_ask(first, mode)) as llm:
        point_at(monkeypatch, llm.base_url)
        probe = by_name(await model_checks(), "tool calls")
        asked = llm.requests
    assert probe.status == "ok", probe
    assert probe.detail.endswith("(when asked again, as a run would)")
    assert probe.detail.startswith("native" if mode is None else "tool calls written as text")
    assert len(asked) == 3, "one more ask, never more, then the tool result"
    # An empty reply gets the agent's own nudge; a text reply is asked again after it.
    said = last_user_text(asked[1])
    assert (NUDGE_MARKER in said) == (first == ""), said


def never_stops(body: dict[str, Any]) -> Reply:
    """A model that writes until the server's limit cuts it, on every call."""
    return Reply("ready " * 50, finish_reason="length", completion_tokens=512)


@pytest.mark.parametrize("server", [never_stops], indirect=True)
async def test_a_reply_run_to_the_completion_limit_is_a_model_that_did_not_stop(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_MAX_TOKENS", "512")
    [endpoint, _, probe] = await model_checks()
    assert endpoint.status == "ok" and probe.status == "fail"
    assert probe.detail.startswith("the model did not stop: its reply to a one-line probe ran")
    assert "(512 tokens, finish_reason=length)" in probe.detail
    assert "loading" not in probe.detail and "stop token" in probe.fix
    assert len(server.requests) == 1, "a model that did not stop is not asked again"


@pytest.mark.parametrize("server", [native], indirect=True)
async def test_a_model_name_the_server_does_not_serve_lists_the_names_it_serves(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_MODEL", "qwen3-typo")
    name = by_name(await model_checks(), "model name")
    assert name.status == "warn"
    assert name.detail == "qwen3-typo is not among the served models: test-model"
    assert "LLM_MODEL" in name.fix


async def test_a_server_that_is_down_is_unreachable_and_probed_no_further(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    point_at(monkeypatch, url)
    [endpoint] = await model_checks()
    assert endpoint.status == "fail"
    assert endpoint.detail.startswith(f"unreachable: {url} (ConnectError")
    server = "mlx_lm.server" if sys.platform == "darwin" else "llama-server"
    assert server in endpoint.fix and "LLM_BASE_URL" in endpoint.fix, "this platform's server"
    assert f"--port {url.rsplit(':', 1)[1].split('/')[0]}" in endpoint.fix, "the port in use"


@pytest.mark.parametrize(
    "server", [lambda body: Reply(tool_calls=[PING], delay=3.0)], indirect=True
)
async def test_a_chat_probe_past_its_deadline_while_models_answer_at_once_did_not_stop(
    server: ScriptedOpenAIServer,
) -> None:
    # 1 s: room for `/models` on a loaded machine (tests on every core), none for the reply.
    checks = await model_checks(timeout=1.0)
    assert by_name(checks, "endpoint").status == "ok"
    probe = by_name(checks, "tool calls")
    assert probe.status == "fail"
    assert "no reply within 1 s, though" in probe.detail
    assert "the model did not stop" in probe.detail and "loading" not in probe.detail
    assert "higher --timeout" in probe.fix


@pytest.mark.parametrize(
    "server", [lambda body: Reply(tool_calls=[PING], delay=1.5)], indirect=True
)
async def test_a_slow_model_gets_the_reply_deadline_not_the_network_one(
    server: ScriptedOpenAIServer,
) -> None:
    # A small model on a laptop CPU answers in seconds: slower than a network probe's
    # deadline, and no sign it does not stop. `deep-research doctor` waits 60 s by default.
    context = load_context({})
    [target] = model_targets(context)
    checks = await check_model(context, target, 1.0, reply_timeout=10.0)
    assert [c.status for c in checks] == ["ok"] * 4
    assert doctor_parser().parse_args([]).timeout is None, "so the command picks each deadline"
    assert REPLY_DEADLINE >= 60


@pytest.mark.parametrize(
    "server", [lambda body: Reply(status=500, error_message=f"bad key {KEY}")], indirect=True
)
async def test_a_server_error_is_one_line_that_never_repeats_a_key(
    server: ScriptedOpenAIServer,
) -> None:
    probe = by_name(await model_checks(), "tool calls")
    assert probe.status == "fail"
    assert probe.detail == "HTTP 500: bad key [REDACTED]"


@pytest.mark.parametrize("server", [lambda body: Reply("Z" * 40 + PLAIN_KEY)], indirect=True)
async def test_a_text_reply_quoting_the_key_is_redacted_before_it_is_cut_short(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_API_KEY", PLAIN_KEY)
    probe = by_name(await model_checks(), "tool calls")
    assert probe.status == "warn"
    assert PLAIN_KEY[:8] not in probe.detail and "[REDACTED]" in probe.detail


@pytest.mark.parametrize(
    "server",
    [lambda body: Reply(status=500, error_message=f"bad key {PLAIN_KEY[:6]}\x00{PLAIN_KEY[6:]}")],
    indirect=True,
)
async def test_a_key_split_by_a_control_character_is_still_redacted(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_API_KEY", PLAIN_KEY)
    probe = by_name(await model_checks(), "tool calls")
    assert probe.detail == "HTTP 500: bad key [REDACTED]"


@pytest.mark.parametrize("server", [native], indirect=True)
def test_an_openai_role_without_its_key_is_a_config_error_naming_the_variable_without_a_request(
    server: ScriptedOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # would catch any request
    assert main(["doctor", "--set", "researcher_model=openai:gpt-4.1"]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and err.count("\n") == 1
    assert server.requests == []
