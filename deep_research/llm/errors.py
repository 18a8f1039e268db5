"""Model errors in any provider's words: which mean unreachable, and how to scrub them.

`RoleModel` turns these into its own readable errors (models.py); the doctor asks the same
questions of its probe.
"""

from __future__ import annotations

import httpx
import openai
from langchain_core.exceptions import ContextOverflowError, ModelConnectionError, ModelTimeoutError

from deep_research.text import secrets

# Connection failures of any provider's client, retried around clients that do not retry
# themselves (Ollama's raises the built-in ConnectionError; others let httpx's through).
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (ConnectionError, httpx.TransportError)
# A server that could not be reached or never answered, in any provider's words: openai's,
# langchain-core's (langchain-anthropic and others raise these) and the transient ones.
UNREACHABLE = (
    openai.APIConnectionError,
    ModelConnectionError,
    ModelTimeoutError,
    *TRANSIENT_ERRORS,
)


# Phrases that servers put in a context-overflow error (vLLM says only this, in the text).
_OVERFLOW_PHRASES = ("maximum context length", "exceeds the available context size")


def is_context_overflow(error: openai.APIStatusError) -> bool:
    """Whether `error` is a server saying the request is longer than its context.

    OpenAI: HTTP 400, code `context_length_exceeded`; llama.cpp: HTTP 400, type
    `exceed_context_size_error`; vLLM: HTTP 400 "maximum context length"; any HTTP 413
    (request body too large, e.g. a proxy's limit).
    """
    if error.status_code == 413 or isinstance(error, ContextOverflowError):
        return True
    if error.status_code != 400:
        return False
    if error.code == "context_length_exceeded" or error.type == "exceed_context_size_error":
        return True
    return any(phrase in error.message.lower() for phrase in _OVERFLOW_PHRASES)


def start_hint(spec: str) -> str:
    provider = spec.partition(":")[0]
    if provider == "local":
        return (
            "Start an OpenAI-compatible server there, e.g. `mlx_lm.server --model "
            "mlx-community/Qwen3-8B-4bit --port 8080`, or point LLM_BASE_URL at yours."
        )
    if provider == "ollama":
        return "Start Ollama there (`ollama serve`), or point OLLAMA_HOST at yours."
    return "Check the network, and the provider's base URL if one is set (e.g. ANTHROPIC_BASE_URL)."


def scrub_error(error: BaseException) -> None:
    """Remove secrets from everything `str`, `repr` and a handler read of a client's error.

    openai's and anthropic's errors keep the text in `message` and the parsed reply in
    `body`; Ollama's in `error`; all of them in `args`.
    """
    for name in ("message", "error", "body"):
        value = getattr(error, name, None)
        if isinstance(value, str | dict | list):
            try:
                setattr(error, name, secrets.scrub(value))
            except AttributeError:  # a read-only property: its source is scrubbed below
                pass
    error.args = tuple(secrets.scrub(arg) if isinstance(arg, str) else arg for arg in error.args)
