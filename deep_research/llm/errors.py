"""Model errors in any provider's words: which mean unreachable, and how to scrub them;
and the readable errors `RoleModel` (its requests: sending.py) raises instead (`readable`).

The doctor asks the same questions of its probe.
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

import httpx
import openai
from langchain_core.exceptions import ContextOverflowError, ModelConnectionError, ModelTimeoutError

from deep_research.errors import ReadableError
from deep_research.llm import attempts
from deep_research.text import secrets


class ModelEndpointError(ReadableError, RuntimeError):
    """The model server could not be reached; the message says where and what to do."""


class ModelDeadlineError(ModelEndpointError):
    """One model call, retries included, outlasted LLM_CALL_DEADLINE.

    An outage: a server that trickles its reply or sends only keep-alives would otherwise
    hold the run forever, since LLM_TIMEOUT bounds each read, not the call.
    """


class ReplyTimeoutError(ModelEndpointError):
    """The server was reached but sent no reply within LLM_TIMEOUT, retries included."""


class ModelServerError(ReadableError, RuntimeError):
    """The server answered a request with an HTTP error; the message is one line, its cause."""


class ContextTooLongError(ModelEndpointError):
    """The server refused a request as longer than its context window.

    An outage of sorts: the server's context is too small for this run, not something one
    topic did, so a researcher re-raises it like any `ModelEndpointError`.
    """


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


OLLAMA_PORT = 11434


def local_server_hint(base_url: str, platform: str | None = None) -> str:
    """How to start a server where `base_url` points: its port, and this platform's server
    (mlx_lm.server runs on Apple silicon only; elsewhere llama.cpp or Ollama)."""
    platform = sys.platform if platform is None else platform  # read per call: testable
    parts = urlsplit(base_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: `Endpoints` would have refused it
        port = 8080
    if platform == "darwin":
        return (
            f"start an OpenAI-compatible server on port {port}, e.g. `mlx_lm.server --model "
            f"mlx-community/Qwen3-8B-4bit --port {port}`, or point LLM_BASE_URL at yours"
        )
    if port == OLLAMA_PORT:
        return "start Ollama (`ollama serve`), or point LLM_BASE_URL at your server"
    return (
        f"start an OpenAI-compatible server on port {port}, e.g. `llama-server -hf "
        f"Qwen/Qwen3-8B-GGUF:Q4_K_M --jinja -c 32768 -n 8192 --port {port}` (or `ollama "
        f"serve`, with LLM_BASE_URL=http://localhost:{OLLAMA_PORT}/v1), or point LLM_BASE_URL "
        "at yours"
    )


def start_hint(spec: str, base_url: str = "http://localhost:8080/v1") -> str:
    provider = spec.partition(":")[0]
    if provider == "local":
        hint = local_server_hint(base_url)
        return f"{hint[0].upper()}{hint[1:]}."
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


def readable(
    error: Exception, role: str, endpoint: str, spec: str, timeout: float | None, retries: int
) -> ReadableError | None:
    """`error` of a `role` call to `endpoint` as one readable error: a time-out, an unreachable
    server, a too-long request or a server's HTTP error in one line; else None."""
    if attempts.timed_out(error):
        return reply_timeout(role, endpoint, timeout, retries)
    if isinstance(error, UNREACHABLE):
        return ModelEndpointError(
            f"Cannot reach the model server at {endpoint} "
            f"({type(error).__name__}: {error}). {start_hint(spec, endpoint)}"
        )
    overflow = isinstance(error, ContextOverflowError) or (
        isinstance(error, openai.APIStatusError) and is_context_overflow(error)
    )
    if not overflow and isinstance(error, openai.APIStatusError):
        return ModelServerError(
            f"The {role} model at {endpoint} refused the request: {attempts.error_line(error)}"
        )
    if not overflow:
        return None
    message = getattr(error, "message", None)
    said = " ".join(str(message or error).split())[:200]  # the server's words, one line
    return ContextTooLongError(f"HTTP {getattr(error, 'status_code', 400)}: {said}")


def reply_timeout(
    role: str, endpoint: str, timeout: float | None, retries: int
) -> ReplyTimeoutError:
    """A server that was reached but answered none of `retries` + 1 attempts in time."""
    waited = f"within {timeout:g} s (LLM_TIMEOUT)" if timeout else "in time"
    tries = f", {retries + 1} attempts" if retries else ""
    return ReplyTimeoutError(
        f"The {role} model at {endpoint} did not answer {waited}{tries}. The server is up "
        "but slow: a long reply on a small machine, or a model that does not stop. Raise "
        "LLM_TIMEOUT, lower LLM_MAX_TOKENS, or use a faster model."
    )
