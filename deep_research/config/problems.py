"""Why a setting cannot be used here, in words a user reads: a model provider's missing
package or credential, a search provider's missing endpoint, pydantic's report made readable.

Every text here may be shown in a terminal, a Studio form or an MCP client: none echoes a
secret (`hide_secrets`).
"""

from __future__ import annotations

import os

from pydantic import ValidationError

from deep_research.config import envfile
from deep_research.config import model_providers as providers
from deep_research.config.endpoints import PROVIDER_KEYS, Endpoints, read_endpoints
from deep_research.config.names import DEFAULT_LLM_MODEL, MODEL_PROVIDERS, SEARCH_PROVIDERS
from deep_research.text import secrets
from deep_research.text.wording import one_line

# Errors never echo secrets: a field named like a key shows this instead of its value.
SECRET_MARKER = "[hidden]"
# The most of a refused value an error shows: a per-run context is outside input, and a
# megabyte value must not become a megabyte error line.
SHOWN_VALUE_CHARS = 120


def models_problem(models: dict[str, str]) -> str | None:
    """What is wrong with a run's `{role}_model` specs, or what their providers lack here."""
    for field, spec in models.items():
        provider, sep, name = spec.partition(":")
        if not sep or not name or provider not in MODEL_PROVIDERS:
            return (
                f"{field}={spec!r} is not a model spec: use 'provider:model' with "
                f"provider one of {', '.join(MODEL_PROVIDERS)} "
                f"(e.g. 'local:{DEFAULT_LLM_MODEL}')"
            )
    endpoints = read_endpoints()
    for provider in dict.fromkeys(spec.partition(":")[0] for spec in models.values()):
        problem = model_provider_problem(provider, endpoints)
        if problem:
            named = [f"{f}={s!r}" for f, s in models.items() if s.startswith(f"{provider}:")]
            return f"{', '.join(named)} {'needs' if len(named) == 1 else 'need'} {problem}"
    return None


def search_problem(provider: str, fallback: str, fallbacks: list[str]) -> str | None:
    """What is wrong with a run's search provider and fallbacks (`fallback` as written)."""
    unknown = [name for name in fallbacks if name not in SEARCH_PROVIDERS]
    if unknown:
        return (
            f"search_fallback={fallback!r} names unknown providers "
            f"{', '.join(map(repr, unknown))}: use a comma-separated list of "
            f"{', '.join(SEARCH_PROVIDERS)} (e.g. 'tavily,searxng,ddgs')"
        )
    endpoints = read_endpoints()
    for name in [provider, *fallbacks]:
        problem = search_provider_problem(name, endpoints)
        if problem:
            return problem
    return None


def model_provider_problem(provider: str, endpoints: Endpoints) -> str | None:
    """What a model provider lacks here (its package, then its credential), or None."""
    package = providers.missing_package(provider)
    if package:
        return f"{package}, which is not installed: {providers.install_hint(provider)}"
    if provider in PROVIDER_KEYS:
        missing = None if endpoints.has_key(provider) else PROVIDER_KEYS[provider]
    else:
        missing = providers.missing_credential(provider, os.environ)
    if missing:
        return (
            f"{missing}: set it in the environment or .env, or use a local: model "
            f"(e.g. 'local:{DEFAULT_LLM_MODEL}')"
        )
    return None


def search_provider_problem(provider: str, endpoints: Endpoints) -> str | None:
    """Why search `provider` cannot be used with this environment, or None when it can."""
    if provider == "tavily" and not endpoints.tavily_api_key:
        return (
            "search provider 'tavily' needs TAVILY_API_KEY in the environment; "
            "set it, or use 'auto', 'searxng' or 'ddgs'"
        )
    if provider == "searxng" and not endpoints.searxng_url:
        return (
            "search provider 'searxng' needs SEARXNG_URL in the environment "
            "(e.g. http://localhost:8888); set it, or use 'auto' or 'ddgs'"
        )
    return None


def explain_invalid(error: ValidationError, given: set[str]) -> str:
    """pydantic's report on a `Context` as one line per field, naming where a value came from."""
    lines = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "context"
        from_env = field not in given and os.environ.get(field.upper())
        source = f" (from {envfile.source_of(field.upper())})" if from_env else ""
        if item["type"] == "value_error" and not item["loc"]:
            lines.append(str(item["msg"]).removeprefix("Value error, "))
            continue
        shown = one_line(repr(item["input"]), SHOWN_VALUE_CHARS)
        value = SECRET_MARKER if secrets.SECRET_ENV.search(field) else shown
        lines.append(f"{field}={value}{source}: {item['msg']}")
    return "Invalid configuration: " + "; ".join(lines)


def hide_secrets(text: str) -> str:
    """`text` without the values of secret-named variables or anything shaped like a key."""
    return secrets.Redactor(marker=SECRET_MARKER).text(text)
