"""llm.errors: which model errors mean unreachable or too long, and scrubbing their secrets."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import openai
import pytest
from langchain_core.exceptions import ModelConnectionError, ModelTimeoutError

from deep_research.llm.errors import (
    TRANSIENT_ERRORS,
    UNREACHABLE,
    is_context_overflow,
    local_server_hint,
    scrub_error,
    start_hint,
)
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer


def _error_from_server(status: int, body: dict[str, Any] | str) -> openai.APIStatusError:
    """The error a real openai client raises for this reply of a server."""
    with ScriptedOpenAIServer(lambda _: Reply(status=status, error_body=body)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    return caught.value


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": {"message": "too long", "code": "context_length_exceeded"}}),  # OpenAI
        (400, {"error": {"message": "n", "type": "exceed_context_size_error", "code": 400}}),
        (400, {"object": "error", "message": "This model's maximum context length is 4096"}),
        (400, {"error": {"message": "Request Exceeds The Available Context Size"}}),
        (413, "Request Entity Too Large"),  # a proxy's limit, in plain text
    ],
    ids=["openai", "llama.cpp", "vllm", "phrase-any-case", "http-413"],
)
def test_overflow_in_each_servers_words(status: int, body: dict[str, Any] | str) -> None:
    assert is_context_overflow(_error_from_server(status, body))


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": {"message": "invalid tool schema", "code": "invalid_request"}}),
        (500, {"error": {"message": "maximum context length exceeded"}}),  # not a 400
        (401, {"error": {"message": "bad key"}}),
    ],
)
def test_other_errors_are_not_overflow(status: int, body: dict[str, Any]) -> None:
    assert not is_context_overflow(_error_from_server(status, body))


def test_a_refused_connection_is_unreachable_in_each_clients_words() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.APIConnectionError) as from_openai:
        client.models.list()
    with pytest.raises(httpx.ConnectError) as from_httpx:
        httpx.get(url)
    for error in (from_openai.value, from_httpx.value, ConnectionRefusedError()):
        assert isinstance(error, UNREACHABLE)
    assert isinstance(from_httpx.value, TRANSIENT_ERRORS)
    assert isinstance(ModelConnectionError("x"), UNREACHABLE)
    assert isinstance(ModelTimeoutError("x"), UNREACHABLE)
    # A server that answered is reachable, whatever it said.
    assert not isinstance(_error_from_server(500, {"error": {"message": "boom"}}), UNREACHABLE)
    assert not isinstance(ValueError("x"), UNREACHABLE)


@pytest.mark.parametrize(
    ("platform", "base", "names"),
    [
        ("darwin", "http://localhost:9001/v1", ("`mlx_lm.server ", "--port 9001`")),
        ("linux", "http://localhost:9001/v1", ("`llama-server ", "--port 9001`", "ollama serve")),
        ("linux", "http://127.0.0.1:11434/v1", ("`ollama serve`",)),
        ("win32", "https://gpu.lan/v1", ("`llama-server ", "--port 443`")),
    ],
)
def test_the_local_hint_names_this_platforms_server_and_the_configured_port(
    platform: str, base: str, names: tuple[str, ...]
) -> None:
    hint = local_server_hint(base, platform)
    assert all(name in hint for name in names), hint
    assert ("mlx_lm.server" in hint) == (platform == "darwin")
    assert "8080" not in hint


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("local:qwen3-8b", ("LLM_BASE_URL",)),
        ("ollama:qwen3", ("ollama serve", "OLLAMA_HOST")),
        ("anthropic:claude", ("base URL",)),
    ],
)
def test_start_hint_names_the_providers_own_remedy(spec: str, names: tuple[str, ...]) -> None:
    hint = start_hint(spec)
    assert all(name in hint for name in names)
    # A local server may be either (the platform decides: the test above); others name theirs.
    others = set() if spec.startswith("local:") else {"ollama serve", "mlx_lm.server"} - set(names)
    assert not any(other in hint for other in others)


SECRET = "sk-live-" + "Z" * 24


def test_scrub_error_removes_an_echoed_key_from_an_openai_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    error = _error_from_server(401, {"error": {"message": f"Incorrect API key: {SECRET}"}})
    assert SECRET in str(error)  # the premise: the server echoed it
    scrub_error(error)
    for text in (str(error), repr(error), error.message, repr(error.body), repr(error.args)):
        assert SECRET not in text
    assert "Incorrect API key" in str(error)


class _OllamaLikeError(Exception):
    """Keeps its text in `error`, with a read-only `message` derived from it."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error

    @property
    def message(self) -> str:
        return self.error


def test_scrub_error_reaches_every_field_and_tolerates_read_only_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_API_KEY", SECRET)
    error = _OllamaLikeError(f"unauthorized: Bearer {SECRET}\x1b[2J")
    scrub_error(error)
    assert SECRET not in error.error and SECRET not in error.message
    assert SECRET not in str(error) and "unauthorized" in str(error)
