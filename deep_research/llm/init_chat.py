"""Chat models of every `init_chat_model` provider, built to this project's policies.

`local:` and `openai:` are built in models.py without `langchain`; every other provider
goes through `langchain.chat_models.init_chat_model`, imported only when one is used. The
same policies apply to all: temperature (unset: the provider's default, 0.1 on Ollama,
which serves small local models like `local:`), LLM_MAX_RETRIES (passed to the client when
it retries itself, else done around the call by `RoleModel`), and the whole-call deadline
and tracing tags, which `RoleModel` adds around any model.
"""

from __future__ import annotations

import importlib
from typing import Any

import httpx
from langchain_core.language_models import BaseChatModel

from deep_research.config.endpoints import Endpoints

# Small local models drift out of JSON and tool-call formats at higher temperatures.
LOCAL_TEMPERATURE = 0.1
# A server that is up accepts at once; only the reply itself may take LLM_TIMEOUT.
CONNECT_TIMEOUT = 10.0
# Providers that serve models from this machine or network: `local:`'s policies apply.
LOCAL_SERVERS = frozenset({"ollama"})
# Where a provider sends requests when its model names no base URL, for error messages.
DEFAULT_ENDPOINTS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://localhost:11434",
}
# Attributes under which integrations keep their base URL (never a key).
_URL_FIELDS = ("openai_api_base", "anthropic_api_url", "base_url", "endpoint_url", "api_base")


def provider_model(
    provider: str, name: str, temperature: float | None, endpoints: Endpoints
) -> BaseChatModel:
    """`provider:name` from `init_chat_model`; `Context` has checked package and credential."""
    from langchain.chat_models import init_chat_model  # heavy: only when a run uses it

    accepted = accepted_arguments(provider)
    options: dict[str, Any] = {}
    if temperature is None and provider in LOCAL_SERVERS:
        temperature = LOCAL_TEMPERATURE
    if temperature is not None:
        options["temperature"] = temperature
    if "max_retries" in accepted:
        options["max_retries"] = endpoints.llm_max_retries
    if provider in LOCAL_SERVERS and "client_kwargs" in accepted:
        # Loading weights makes the first reply slow; a server that is not there is said
        # at once. The whole call is bounded by `RoleModel`'s deadline.
        timeout = httpx.Timeout(
            endpoints.llm_timeout, connect=min(CONNECT_TIMEOUT, endpoints.llm_timeout)
        )
        options["client_kwargs"] = {"timeout": timeout}
    model: BaseChatModel = init_chat_model(name, model_provider=provider, **options)
    return model


def accepted_arguments(provider: str) -> set[str]:
    """The constructor arguments (field names and aliases) of `provider`'s chat model class.

    Only what a class declares is passed: most integrations move an unknown argument into
    the request body, where the API refuses it. Unknown classes get the temperature only.
    """
    from langchain.chat_models import base as registry

    found = getattr(registry, "_BUILTIN_PROVIDERS", {}).get(provider)
    if not found:
        return set()
    module, class_name = found[0], found[1]
    cls = getattr(importlib.import_module(module), class_name, None)
    fields = getattr(cls, "model_fields", {})
    return set(fields) | {field.alias for field in fields.values() if field.alias}


def retries_natively(model: BaseChatModel) -> bool:
    """Whether the model's own client retries failed requests (`max_retries`, not set to 0:
    the `local:` client is, so that `RoleModel` retries and each attempt is seen)."""
    return "max_retries" in type(model).model_fields and getattr(model, "max_retries", 1) != 0


def base_url(model: BaseChatModel, provider: str) -> str:
    """Where `model` sends its requests, for error messages: its base URL or the default."""
    for field in _URL_FIELDS:
        value = getattr(model, field, None)
        if isinstance(value, str) and value:
            return value
    # ChatOllama leaves `base_url` unset and its client reads OLLAMA_HOST: ask the client.
    client = getattr(getattr(model, "_async_client", None), "_client", None)
    if isinstance(client, httpx.AsyncClient):
        return str(client.base_url)
    return DEFAULT_ENDPOINTS.get(provider, f"{provider}'s API")
