"""Chat models from a 'provider:model' spec: the local OpenAI-compatible endpoint, OpenAI,
or any other `init_chat_model` provider (built in `llm.init_chat`).

What a caller gets here is a LangChain `BaseChatModel` and nothing around it; `llm.models`
wraps one per role in the call policy (deadline, retries, readable errors, salvage). The
completion limit each role's calls are sent with is chosen here too (`completion_tokens`).
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
from langchain_core.language_models import BaseChatModel

from deep_research.config.endpoints import read_endpoints
from deep_research.config.model_providers import PROVIDERS
from deep_research.config.names import MODEL_PROVIDERS, ConfigError
from deep_research.config.report_lengths import LENGTHS
from deep_research.config.settings import Context
from deep_research.llm import init_chat
from deep_research.llm.init_chat import CONNECT_TIMEOUT, LOCAL_TEMPERATURE
from deep_research.llm.lenient_chat import LenientChatOpenAI
from deep_research.llm.prices import Price
from deep_research.runtime.http import model_clients

# "judge" is the evals' grader (evals/judges), built from a spec of its own, not `Context`.
Role = Literal["clarifier", "orchestrator", "researcher", "judge"]

# The longest reply each role's job needs, in tokens. A priced call is counted against the
# budget at its whole completion limit, so the model's longest reply (LLM_MAX_TOKENS: 8,192
# tokens, $0.066 at gpt-4.1's $8 a million) made a research share too small for one call;
# a reply sized to the role's job is what a share has to hold. None: LLM_MAX_TOKENS.
COMPLETION_LIMITS: dict[Role, int | None] = {
    # One JSON decision: at most 3 questions of 500 characters and a sentence saying what
    # will be researched (text/limits.py), about 2,000 characters or 600 tokens, plus JSON.
    "clarifier": 1_024,
    # A search call, or the topic's cited report, which the orchestrator reads cut to
    # 12,000 characters (REPORT_CHARS): links, text fragments and quoted passages run at
    # about 3 characters a token, so ~4,000 tokens; a longer reply would be paid and cut.
    "researcher": 4_096,
    # Its reply without tool calls is the final report (so is the report writer's, which
    # uses this role's model): a planning turn must be able to write a whole report.
    "orchestrator": None,
    "judge": None,  # the evals' grader, built from its own spec; never held to a budget
}

# The longest reply each role's job needs from a local server, in tokens, sent as `max_tokens`
# (llama-cpp-python reads only that name) and LLM_MAX_TOKENS when lower. Not the budget's
# sizes: a thinking model spends tokens in `<think>` before its answer, so the clarifier
# gets room for that. But never the whole context: a small model that never stops ran one
# tool argument to the end of an 8k context (7,049 tokens, 9 minutes on 2 cores). The report
# is the orchestrator's reply, so it is capped too: 4,096 tokens is about 12,000-16,000
# characters (what the orchestrator reads of a topic is 12,000), and half of an 8k context
# stays for the prompt. `report_length` sizes it (`report_tokens`): 2,048 for the report
# call at `brief`; `detailed` stays at this limit unless LLM_MAX_TOKENS is set.
# A reply cut at its limit is seen (`reply_cut`), not passed silently.
LOCAL_COMPLETION_LIMITS: dict[Role, int | None] = {
    "clarifier": 2_048,
    "researcher": 4_096,
    "orchestrator": 4_096,
    "judge": None,  # the evals' grader: LLM_MAX_TOKENS
}

# Local servers accept any key, but the OpenAI client refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"


def thinking_body(setting: str) -> dict[str, Any] | None:
    """Request fields that switch a local model's thinking on or off (`None`: send nothing).

    Chat templates with a thinking switch (Qwen3 and others) read `enable_thinking`;
    mlx_lm.server, llama.cpp (`--jinja`) and vLLM pass `chat_template_kwargs` to them.
    """
    if setting == "server":
        return None
    return {"chat_template_kwargs": {"enable_thinking": setting == "on"}}


def chat_model(context: Context, role: Role, report: bool = False) -> BaseChatModel:
    """The chat model configured for `role`, built from its 'provider:model' spec; with
    `report`, for the call that writes the report (its limit sized to `report_length`)."""
    spec: str = getattr(context, f"{role}_model")
    temperature: float | None = getattr(context, f"{role}_temperature")
    sized = report_tokens(context, role, report)
    return spec_model(spec, temperature, context.local_thinking, role, sized)


def report_tokens(context: Context, role: Role, report: bool = True) -> int | None:
    """The completion limit `report_length` sets for the orchestrator's calls (None: the
    role's usual one; other roles: always None). The call that writes the report at the
    turn cap or the budget's stop (`report`) is sized to it. A planning call's reply
    without tool calls is the report too, so a longer length raises its limit, but a
    shorter one never lowers it: a thinking model's plan is not cut at `brief`'s 2,048."""
    tokens = LENGTHS[context.report_length].tokens if role == "orchestrator" else None
    if report or tokens is None:
        return tokens
    usual = LOCAL_COMPLETION_LIMITS["orchestrator"] or 0  # the lowest of its usual limits
    return tokens if tokens > usual else None


def spec_model(
    spec: str,
    temperature: float | None,
    thinking: str = "server",
    role: str = "judge",
    sized: int | None = None,
) -> BaseChatModel:
    """A chat model from a 'provider:model' spec and the environment's endpoints."""
    provider, _, name = spec.partition(":")
    endpoints = read_endpoints()
    if provider == "local":
        api_key = endpoints.llm_api_key.get_secret_value() if endpoints.llm_api_key else None
        # mlx_lm.server loads ~5 GB of weights on the first request: long reads, but a
        # server that is not there is said at once. The whole call is bounded in `RoleModel`.
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
            # Retried in `RoleModel`, where each attempt is seen (`model_retry`).
            max_retries=0,
            # Servers fall back to tiny defaults (mlx_lm: 512) and silently drop truncated
            # tool calls; sent as both `max_completion_tokens` and `max_tokens` (lenient_chat).
            max_completion_tokens=local_limit(
                role,
                endpoints.llm_max_tokens,
                sized,
                explicit="llm_max_tokens" in endpoints.model_fields_set,
            ),
            extra_body=thinking_body(thinking),
            local_server=True,
        )
    if provider == "openai":  # `Context` has checked that OPENAI_API_KEY is set
        # This process's clients, one per event loop, as for `local:`: langchain-openai's own
        # default client is one per process, and a second event loop (a notebook cell, a
        # test) meets the first one's closed connections.
        timeout = httpx.Timeout(
            endpoints.llm_timeout, connect=min(CONNECT_TIMEOUT, endpoints.llm_timeout)
        )
        sync_client, async_client = model_clients(timeout)
        return LenientChatOpenAI(
            model=name,
            api_key=endpoints.openai_api_key,
            temperature=temperature,
            timeout=timeout,
            http_client=sync_client,
            http_async_client=async_client,
            http_socket_options=(),
            max_retries=endpoints.llm_max_retries,
        )
    if provider in PROVIDERS:  # `Context` has checked its package and credential
        return init_chat.provider_model(provider, name, temperature, endpoints)
    raise ConfigError(
        f"{role}_model={spec!r}: unknown provider {provider!r}; "
        f"supported: {', '.join(MODEL_PROVIDERS)}"
    )


def local_limit(
    role: str, configured: int, sized: int | None = None, explicit: bool = False
) -> int:
    """The completion limit a `local:` model of `role` is sent with: its job's, or lower.
    The report's call is `sized` to its length, but above the role's limit only when
    LLM_MAX_TOKENS was set (`explicit`): its default is the whole of an 8k context."""
    usual: int | None = LOCAL_COMPLETION_LIMITS.get(role)  # type: ignore[call-overload]
    own = sized or usual
    if sized is not None and usual is not None and not explicit:
        own = min(sized, usual)
    return configured if own is None else min(own, configured)


def completion_tokens(
    role: Role, price: Price, own: int | None, configured: int, sized: int | None = None
) -> int:
    """The completion limit `role`'s calls are sent with under a budget and counted at.

    `own` is the client's own limit (Anthropic's `max_tokens`), `configured` LLM_MAX_TOKENS;
    the lowest of them and the role's `COMPLETION_LIMITS` (the orchestrator's `sized` to the
    report's length) wins. A free model keeps its
    client's limit, as `spec_model` sends it: a `local:` one its role's
    (`LOCAL_COMPLETION_LIMITS`), others LLM_MAX_TOKENS (their calls cost nothing to bound).
    """
    if price.free:
        return own or configured
    limits = [configured, own, sized or COMPLETION_LIMITS[role]]
    return min(limit for limit in limits if limit is not None)


def public_url(url: str) -> str:
    """`url` without credentials or query, safe for error messages, logs and traces."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
