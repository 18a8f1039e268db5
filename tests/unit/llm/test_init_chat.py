"""llm.init_chat: other providers' chat models built to the project's policies."""

from __future__ import annotations

import httpx
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage
from langchain_ollama import ChatOllama
from langchain_openai import ChatOpenAI

from deep_research.config.endpoints import Endpoints
from deep_research.llm.init_chat import (
    CONNECT_TIMEOUT,
    DEFAULT_ENDPOINTS,
    LOCAL_TEMPERATURE,
    accepted_arguments,
    base_url,
    provider_model,
    retries_natively,
)
from tests.support.fakes.anthropic_server import FakeAnthropicServer
from tests.support.fakes.ollama_server import FakeOllamaServer
from tests.support.fakes.openai_server import Reply


def test_accepted_arguments_are_the_classes_fields_and_aliases() -> None:
    ollama = accepted_arguments("ollama")
    assert {"temperature", "client_kwargs", "base_url"} <= ollama
    anthropic = accepted_arguments("anthropic")
    assert {"max_retries", "temperature", "model"} <= anthropic
    assert "anthropic_api_url" in anthropic or "base_url" in anthropic
    assert accepted_arguments("no-such-provider") == set()


async def test_ollama_is_local_low_temperature_bounded_and_says_where_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeOllamaServer(lambda body: Reply("pong")) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        endpoints = Endpoints(llm_timeout=30)
        model = provider_model("ollama", "qwen3:8b", None, endpoints)
        assert isinstance(model, ChatOllama) and model.temperature == LOCAL_TEMPERATURE
        timeout = (model.client_kwargs or {})["timeout"]
        assert isinstance(timeout, httpx.Timeout)
        assert (timeout.read, timeout.connect) == (30, CONNECT_TIMEOUT)
        reply = await model.ainvoke([HumanMessage("ping")])
        [request] = server.requests
        assert base_url(model, "ollama").rstrip("/") == server.url
    assert reply.content == "pong"
    assert request["model"] == "qwen3:8b"
    assert request["options"]["temperature"] == LOCAL_TEMPERATURE
    # Ollama's client does not retry by itself: RoleModel retries around it.
    assert not retries_natively(model)


def test_a_short_timeout_bounds_the_connect_too(monkeypatch: pytest.MonkeyPatch) -> None:
    model = provider_model("ollama", "m", 0.7, Endpoints(llm_timeout=2))
    assert isinstance(model, ChatOllama) and model.temperature == 0.7
    assert model.client_kwargs["timeout"].connect == 2  # type: ignore[index]


async def test_anthropic_keeps_its_default_temperature_and_retries_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeAnthropicServer(lambda body: Reply("hello")) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        model = provider_model("anthropic", "claude-x", None, Endpoints(llm_max_retries=5))
        assert isinstance(model, ChatAnthropic)
        reply = await model.ainvoke([HumanMessage("hi")])
        [request] = server.requests
        assert base_url(model, "anthropic") == server.url
    assert reply.content == "hello" and "temperature" not in request
    assert model.max_retries == 5 and retries_natively(model)


def test_base_url_falls_back_to_the_providers_default() -> None:
    model = ChatOpenAI(model="m", api_key="x")  # type: ignore[arg-type]
    assert base_url(model, "openai") == DEFAULT_ENDPOINTS["openai"]
    given = ChatOpenAI(model="m", api_key="x", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    assert base_url(given, "openai") == "http://127.0.0.1:9/v1"


def test_a_client_whose_retries_are_switched_off_is_retried_around() -> None:
    # The `local:` client: RoleModel retries it, so each attempt is seen (`model_retry`).
    off = ChatOpenAI(model="m", api_key="x", max_retries=0)  # type: ignore[arg-type]
    on = ChatOpenAI(model="m", api_key="x", max_retries=2)  # type: ignore[arg-type]
    assert not retries_natively(off) and retries_natively(on)
