"""Chat models per role: the local OpenAI-compatible endpoint, OpenAI, or any provider.

Every other `init_chat_model` provider is built in `provider_models`; `RoleModel` gives
them all the same deadline, retries, secret scrubbing, tracing tags and error messages.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai
from langchain_core.exceptions import (
    ContextOverflowError,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel

from deep_research.config.endpoints import read_endpoints
from deep_research.config.model_providers import PROVIDERS
from deep_research.config.names import MODEL_PROVIDERS, ConfigError
from deep_research.config.settings import Context
from deep_research.errors import DeepResearchError
from deep_research.llm import errors as model_errors
from deep_research.llm import init_chat as provider_models
from deep_research.llm import toolcalls
from deep_research.llm.errors import is_context_overflow
from deep_research.llm.init_chat import CONNECT_TIMEOUT, LOCAL_TEMPERATURE
from deep_research.llm.lenient_chat import LenientChatOpenAI
from deep_research.runtime import prompts, tracing
from deep_research.runtime.http import model_clients
from deep_research.text import limits, secrets

log = logging.getLogger(__name__)

# "judge" is the evals' grader (evals/judges), built from a spec of its own, not `Context`.
Role = Literal["clarifier", "orchestrator", "researcher", "judge"]

# Local servers accept any key, but the OpenAI client refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"


class ModelEndpointError(DeepResearchError, RuntimeError):
    """The model server could not be reached; the message says where and what to do."""


class ModelDeadlineError(ModelEndpointError):
    """One model call, retries included, outlasted LLM_CALL_DEADLINE.

    An outage: a server that trickles its reply or sends only keep-alives would otherwise
    hold the run forever, since LLM_TIMEOUT bounds each read, not the call.
    """


class ContextTooLongError(ModelEndpointError):
    """The server refused a request as longer than its context window.

    An outage of sorts: the server's context is too small for this run, not something one
    topic did, so a researcher re-raises it like any `ModelEndpointError`.
    """


class EmptyReplyError(DeepResearchError, RuntimeError):
    """The model returned nothing usable twice in a row, the second time after a nudge."""


def thinking_body(setting: str) -> dict[str, Any] | None:
    """Request fields that switch a local model's thinking on or off (`None`: send nothing).

    Chat templates with a thinking switch (Qwen3 and others) read `enable_thinking`;
    mlx_lm.server, llama.cpp (`--jinja`) and vLLM pass `chat_template_kwargs` to them.
    """
    if setting == "server":
        return None
    return {"chat_template_kwargs": {"enable_thinking": setting == "on"}}


def chat_model(context: Context, role: Role) -> BaseChatModel:
    """The chat model configured for `role`, built from its 'provider:model' spec."""
    spec: str = getattr(context, f"{role}_model")
    temperature: float | None = getattr(context, f"{role}_temperature")
    return spec_model(spec, temperature, context.local_thinking, role)


def spec_model(
    spec: str, temperature: float | None, thinking: str = "server", role: str = "judge"
) -> BaseChatModel:
    """A chat model from a 'provider:model' spec and the environment's endpoints."""
    provider, _, name = spec.partition(":")
    endpoints = read_endpoints()
    if provider == "local":
        api_key = endpoints.llm_api_key.get_secret_value() if endpoints.llm_api_key else None
        # mlx_lm.server loads ~5 GB of weights on the first request: long reads, but a
        # server that is not there is said at once. The whole call is bounded in `_call`.
        timeout = httpx.Timeout(
            endpoints.llm_timeout, connect=min(CONNECT_TIMEOUT, endpoints.llm_timeout)
        )
        sync_client, async_client = model_clients(timeout)  # shared: no CA bundle per call
        return LenientChatOpenAI(
            model=name,
            base_url=endpoints.llm_base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,  # type: ignore[arg-type]
            temperature=LOCAL_TEMPERATURE if temperature is None else temperature,
            timeout=timeout,
            http_client=sync_client,
            http_async_client=async_client,
            # Socket options would need langchain's own transport (which ignores proxy
            # variables), and it warns on stderr when given clients and none.
            http_socket_options=(),
            max_retries=endpoints.llm_max_retries,
            # Servers fall back to tiny defaults (mlx_lm: 512) and silently drop truncated
            # tool calls; langchain-openai sends this as `max_completion_tokens`.
            max_completion_tokens=endpoints.llm_max_tokens,
            extra_body=thinking_body(thinking),
        )
    if provider == "openai":  # `Context` has checked that OPENAI_API_KEY is set
        return LenientChatOpenAI(
            model=name,
            api_key=endpoints.openai_api_key,
            temperature=temperature,
            max_retries=endpoints.llm_max_retries,
        )
    if provider in PROVIDERS:  # `Context` has checked its package and credential
        return provider_models.provider_model(provider, name, temperature, endpoints)
    raise ConfigError(
        f"{role}_model={spec!r}: unknown provider {provider!r}; "
        f"supported: {', '.join(MODEL_PROVIDERS)}"
    )


@dataclass(frozen=True)
class RoleModel:
    """A role's chat model plus where it sends requests (for error messages; never a key)."""

    model: BaseChatModel
    endpoint: str
    role: Role
    spec: str
    deadline: float  # seconds one `_call` may take, the client's retries included
    retries: int = 0  # done around the call, for clients that do not retry themselves

    async def ask(
        self, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]] = ()
    ) -> AIMessage:
        """The model's reply, settled for small models (see `toolcalls`), never empty.

        An empty reply gets one nudge; a second one raises `EmptyReplyError`.
        """
        raw, sent = await self._fitted(messages, tools)
        reply = toolcalls.settle(raw, tools)
        if not toolcalls.is_empty(reply):
            return _unique_call_ids(reply)
        log.warning("the %s model returned an empty reply; nudging it once", self.role)
        nudge = HumanMessage(prompts.render("empty_reply"))
        raw, _ = await self._fitted([*sent, nudge], tools)
        reply = toolcalls.settle(raw, tools)
        if toolcalls.is_empty(reply):
            raise EmptyReplyError(
                f"The {self.role} model at {self.endpoint} returned an empty reply twice, the "
                "second time after a nudge. Small models do this when a tool call is cut off: "
                "raise LLM_MAX_TOKENS, or check the server log for a dropped tool call."
            )
        return _unique_call_ids(reply)

    async def _fitted(
        self, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]]
    ) -> tuple[AIMessage, list[BaseMessage]]:
        """The reply and the messages that got it: shortened while the server says too long.

        Each retry is strictly shorter (`limits.shorten`), so the server never gets the same
        prompt twice; after `limits.SHORTEN_ROUNDS` the error says how to raise the context.
        """
        attempt = list(messages)
        for shortened in range(limits.SHORTEN_ROUNDS + 1):
            try:
                return await self._call(attempt, tools), attempt
            except ContextTooLongError as refusal:
                shorter = limits.shorten(attempt) if shortened < limits.SHORTEN_ROUNDS else None
                if shorter is None:
                    raise ContextTooLongError(
                        f"The {self.role} model at {self.endpoint} refused the request as too "
                        f"long for its context, also after shortening it {shortened} time(s) "
                        f"to {_chars(attempt):,} characters ({refusal}). Raise the server's "
                        "context size (llama.cpp: -c 32768; Ollama: OLLAMA_CONTEXT_LENGTH=32768; "
                        "vLLM: --max-model-len), or use a model with a longer context."
                    ) from None
                log.warning(
                    "the %s request (%d characters) was too long for %s; retrying with %d",
                    self.role,
                    _chars(attempt),
                    self.endpoint,
                    _chars(shorter),
                )
                attempt = shorter
        raise AssertionError("unreachable: the last round returns or raises")

    async def _call(
        self, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]]
    ) -> AIMessage:
        """One request; an unreachable or stalled server becomes one clear `ModelEndpointError`."""
        runnable: Any = self.model.bind_tools(list(tools)) if tools else self.model
        if self.retries:
            runnable = runnable.with_retry(
                retry_if_exception_type=model_errors.TRANSIENT_ERRORS,
                stop_after_attempt=self.retries + 1,
            )
        # A key never goes to a server other than its own: its own travels in the header,
        # and no message may carry any (a search API's error text can quote its key).
        sent = [_without_secrets(message) for message in messages]
        # Around the client, not inside it: its retries and every provider are covered.
        deadline = asyncio.timeout(self.deadline)
        try:
            async with deadline:
                reply = await runnable.ainvoke(sent, tracing.model_config(self.role, self.spec))
        except TimeoutError:
            if not deadline.expired():
                raise
            raise ModelDeadlineError(
                f"The {self.role} model at {self.endpoint} did not finish one call within "
                f"{self.deadline:g} s, retries included. The server may be sending its reply "
                "very slowly or only keep-alives; if it is just slow (loading weights, a long "
                "report), raise LLM_CALL_DEADLINE."
            ) from None
        except Exception as error:
            # Scrubbed in place before it propagates: LangGraph stores a failed task's error
            # text in the checkpoint, and a server may echo the key it received.
            model_errors.scrub_error(error)
            translated = self._translated(error)
            if translated is None:
                raise
            raise translated from None
        if not isinstance(reply, AIMessage):
            raise TypeError(f"expected an AIMessage from the model, got {type(reply).__name__}")
        return reply

    def _translated(self, error: Exception) -> ModelEndpointError | None:
        """An unreachable server or a too-long request, as one readable error; else None."""
        if isinstance(error, model_errors.UNREACHABLE):
            return ModelEndpointError(
                f"Cannot reach the model server at {self.endpoint} "
                f"({type(error).__name__}: {error}). {model_errors.start_hint(self.spec)}"
            )
        overflow = isinstance(error, ContextOverflowError) or (
            isinstance(error, openai.APIStatusError) and is_context_overflow(error)
        )
        if not overflow:
            return None
        message = getattr(error, "message", None)
        said = " ".join(str(message or error).split())[:200]  # the server's words, one line
        return ContextTooLongError(f"HTTP {getattr(error, 'status_code', 400)}: {said}")


def _without_secrets(message: BaseMessage) -> BaseMessage:
    content = secrets.scrub(message.content)
    if content == message.content:
        return message
    return message.model_copy(update={"content": content})


def _chars(messages: Sequence[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)


def _unique_call_ids(reply: AIMessage) -> AIMessage:
    """Give every tool call its own id: each must be answered by exactly one tool message."""
    seen: set[str] = set()
    calls = []
    for call in reply.tool_calls:
        call_id = call.get("id") or ""
        if not call_id or call_id in seen:
            call = {**call, "id": f"call_{uuid.uuid4().hex[:12]}"}
        seen.add(call["id"] or "")
        calls.append(call)
    if calls == reply.tool_calls:
        return reply
    return reply.model_copy(update={"tool_calls": calls})


def role_model(context: Context, role: Role) -> RoleModel:
    """The configured model for `role`, ready to call."""
    model = chat_model(context, role)
    spec = getattr(context, f"{role}_model")
    endpoint = public_url(provider_models.base_url(model, spec.partition(":")[0]))
    endpoints = read_endpoints()
    retries = 0 if provider_models.retries_natively(model) else endpoints.llm_max_retries
    return RoleModel(
        model=model,
        endpoint=endpoint,
        role=role,
        spec=spec,
        deadline=endpoints.call_deadline,
        retries=retries,
    )


def public_url(url: str) -> str:
    """`url` without credentials or query, safe for error messages, logs and traces."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
