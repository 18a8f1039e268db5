"""The per-role model policy: a local role's temperature, endpoint and token limit, a cloud
role's provider defaults and the key it needs."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI

from deep_research.config.names import ConfigError
from deep_research.config.settings import Context
from deep_research.llm.chat_models import PLACEHOLDER_API_KEY, chat_model
from deep_research.llm.init_chat import LOCAL_TEMPERATURE


def test_local_role_gets_low_temperature_endpoint_and_token_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    model = chat_model(Context(), "researcher")
    assert isinstance(model, ChatOpenAI)
    assert model.temperature == LOCAL_TEMPERATURE
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key.get_secret_value() == PLACEHOLDER_API_KEY
    assert model.max_tokens and model.max_tokens >= 4096
    assert chat_model(Context(researcher_temperature=0.7), "researcher").temperature == 0.7


def test_cloud_role_keeps_provider_default_temperature(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="needs OPENAI_API_KEY"):
        chat_model(Context(orchestrator_model="openai:gpt-4.1"), "orchestrator")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = chat_model(Context(orchestrator_model="openai:gpt-4.1"), "orchestrator")
    assert isinstance(model, ChatOpenAI)
    assert model.temperature is None and model.model_name == "gpt-4.1"
