"""Chat models built from 'provider:model' specs: the local endpoint's settings, thinking,
unknown providers, and URLs fit for messages. (Per-role temperature: test_models_roles.py.)"""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from deep_research.config.names import ConfigError
from deep_research.config.settings import Context
from deep_research.llm.chat_models import chat_model, public_url, spec_model, thinking_body
from deep_research.llm.init_chat import CONNECT_TIMEOUT
from deep_research.llm.models import role_model


def test_thinking_is_switched_by_the_chat_template_or_left_to_the_server() -> None:
    assert thinking_body("server") is None
    assert thinking_body("on") == {"chat_template_kwargs": {"enable_thinking": True}}
    assert thinking_body("off") == {"chat_template_kwargs": {"enable_thinking": False}}


def test_a_local_role_sends_the_contexts_thinking_setting() -> None:
    model = chat_model(Context(local_thinking="off"), "clarifier")
    assert isinstance(model, ChatOpenAI)
    assert model.extra_body == thinking_body("off")


def test_the_local_endpoint_reads_its_key_retries_and_tokens_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLM_API_KEY", "local-key-123")
    monkeypatch.setenv("LLM_MAX_RETRIES", "5")
    monkeypatch.setenv("LLM_MAX_TOKENS", "1024")
    model = spec_model("local:some-model", None)
    assert isinstance(model, ChatOpenAI)
    assert isinstance(model.openai_api_key, SecretStr)
    assert model.openai_api_key.get_secret_value() == "local-key-123"
    assert (model.max_tokens, model.model_name) == (1024, "some-model")
    # Its client never retries: `RoleModel` does, LLM_MAX_RETRIES times, each attempt seen.
    assert model.max_retries == 0
    assert role_model(Context(), "researcher").retries == 5


def test_the_local_connect_timeout_is_short_and_never_longer_than_the_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = spec_model("local:m", 0.2)
    assert model.request_timeout.connect == CONNECT_TIMEOUT  # type: ignore[attr-defined]
    monkeypatch.setenv("LLM_TIMEOUT", "2")
    short = spec_model("local:m", 0.2)
    assert short.request_timeout.connect == short.request_timeout.read == 2  # type: ignore[attr-defined]


def test_local_models_share_one_sync_http_client() -> None:
    # One client (and one read of the CA bundle) for every model built, not two per call.
    first, second = spec_model("local:m", None), spec_model("local:m", 0.5)
    assert first.root_client._client is second.root_client._client  # type: ignore[attr-defined]


def test_an_unknown_provider_is_a_config_error_naming_the_role() -> None:
    with pytest.raises(ConfigError, match=r"researcher_model='nope:m': unknown provider 'nope'"):
        spec_model("nope:m", None, role="researcher")


def test_a_public_url_keeps_scheme_host_port_and_path_only() -> None:
    assert public_url("http://u:p@host.example/v1/?q=1#frag") == "http://host.example/v1/"
    assert public_url("https://[2001:db8::1]/v1") == "https://[2001:db8::1]/v1"


def test_openai_models_get_this_loops_client_not_one_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """langchain-openai's default client is one per process: a second event loop (a notebook
    cell, the next test) met the first loop's closed connections ("Event loop is closed")."""
    import asyncio

    from deep_research.llm.chat_models import spec_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    async def client() -> object:
        model = spec_model("openai:gpt-4.1-mini", None)
        return model.http_async_client  # type: ignore[attr-defined]

    first, second = asyncio.run(client()), asyncio.run(client())
    assert first is not None and first is not second
