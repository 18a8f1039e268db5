"""Run configuration: the graph's `Context`, and the environment-only endpoints and keys.

Precedence for every `Context` field: per-run context (Studio, SDK, notebook, CLI flags) >
the upper-cased environment variable of the same name > the nearest `.env` (loaded below
the environment by `envfile`) > the default below. Endpoints, keys and anything that
widens what the agent may reach live in `Endpoints`, which only the environment can set.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from deep_research.config import envfile
from deep_research.config import model_providers as providers

# Re-exported: callers name them from here; they live apart so the CLI's help stays light.
from deep_research.config.names import (
    DEFAULT_LLM_MODEL,
    MODEL_PROVIDERS,
    SEARCH_PROVIDERS,
    ConfigError,
)
from deep_research.text import secrets

ROLES = ("clarifier", "orchestrator", "researcher")
# The key `Endpoints` itself holds; other providers' credentials are in `providers.PROVIDERS`.
PROVIDER_KEYS = {"openai": "OPENAI_API_KEY"}
# Errors never echo secrets: a field named like a key shows this instead of its value.
HIDDEN = "[hidden]"
# The least a whole model call is allowed by default: loading weights, then a long report.
MIN_CALL_DEADLINE = 900.0


def _default_model() -> str:
    return f"local:{os.environ.get('LLM_MODEL') or DEFAULT_LLM_MODEL}"


class Context(BaseSettings):
    """Per-run settings, shown as a form in LangGraph Studio."""

    model_config = SettingsConfigDict(env_ignore_empty=True, extra="forbid", frozen=True)

    clarifier_model: str = Field(
        default_factory=_default_model,
        description="Model that asks the clarifying questions, as 'provider:model' "
        "(providers: local, openai, anthropic, ollama, google_genai, groq, mistralai, bedrock "
        "and every other langchain init_chat_model provider, with its extra installed). "
        "Default: local:$LLM_MODEL.",
    )
    orchestrator_model: str = Field(
        default_factory=_default_model,
        description="Model that plans, delegates research and writes the report.",
    )
    researcher_model: str = Field(
        default_factory=_default_model,
        description="Model that runs searches and writes each cited intermediate report.",
    )
    clarifier_temperature: float | None = Field(
        default=None,
        ge=0,
        le=2,
        description="Sampling temperature for the clarifier. Unset: 0.1 on local: and "
        "ollama: (small models need it to keep formats), the provider's default elsewhere.",
    )
    orchestrator_temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature for the orchestrator."
    )
    researcher_temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature for the researchers."
    )
    local_thinking: Literal["off", "on", "server"] = Field(
        default="off",
        description="Thinking (<think> reasoning) on local endpoints, sent as "
        "chat_template_kwargs.enable_thinking. off: faster, and small models stop hiding "
        "tool calls inside <think>; on; server: send nothing, the server decides.",
    )
    allow_clarification: bool = Field(
        default=True, description="Ask the user 2-3 clarifying questions before researching."
    )
    max_clarification_rounds: int = Field(
        default=1, ge=0, le=5, description="Most rounds of clarifying questions per run."
    )
    review_plan: bool = Field(
        default=False,
        description="Pause on the orchestrator's first plan until the user approves it: "
        'resume with "ok", a list of strings (the new plan) or {"feedback": "..."} (the '
        "plan is revised and shown again). Off where nobody can answer (a piped CLI).",
    )
    max_plan_reviews: int = Field(
        default=2,
        ge=1,
        le=10,
        description="Most plan reviews per question; after the last feedback the revised "
        "plan runs without asking again.",
    )
    max_researchers_per_turn: int = Field(
        default=3,
        ge=1,
        le=16,
        description="Most researchers running at once; further research calls wait their turn.",
    )
    max_research_calls_per_reply: int = Field(
        default=6,
        ge=1,
        le=50,
        description="Research calls run per orchestrator reply; the calls beyond it are "
        "answered with an error naming this limit, to be made again next turn.",
    )
    max_orchestrator_turns: int = Field(
        default=6,
        ge=1,
        le=50,
        description="Orchestrator model calls before it must write the report without tools.",
    )
    max_todo_updates: int = Field(
        default=3,
        ge=1,
        le=20,
        description="write_todos calls per run; later ones are answered 'plan locked' and "
        "change nothing.",
    )
    max_todo_only_turns: int = Field(
        default=2,
        ge=1,
        le=10,
        description="Consecutive orchestrator replies that only update todos before todo "
        "updates are locked for the rest of the run.",
    )
    max_repeated_calls: int = Field(
        default=3,
        ge=2,
        le=10,
        description="The same tool call with the same arguments in this many consecutive "
        "orchestrator replies is refused with a message instead of run again.",
    )
    max_researcher_turns: int = Field(
        default=4,
        ge=1,
        le=20,
        description="Model calls per researcher before it must write its report.",
    )
    max_searches_per_run: int = Field(
        default=25,
        ge=0,
        le=500,
        description="Real searches allowed per thread, across all researchers and resumes.",
    )
    max_results_per_search: int = Field(
        default=5, ge=1, le=20, description="Results requested from the provider per query."
    )
    search_provider: Literal["auto", "tavily", "searxng", "ddgs", "library"] = Field(
        default="auto",
        description="Search backend. auto: tavily when TAVILY_API_KEY is set, else searxng "
        "when SEARXNG_URL is set, else ddgs. library: only your documents (deep-research "
        "library add), never the web; search_fallback is then ignored.",
    )
    search_fallback: str = Field(
        default="",
        description="Comma-separated providers tried in order when the main one fails, is "
        "rate-limited or finds nothing, e.g. 'tavily,searxng,ddgs'. Empty: no fallback.",
    )
    search_library: bool = Field(
        default=True,
        description="Search your document library (deep-research library add) in every "
        "search step too, beside the web; its passages pass the same relevance filter.",
    )
    relevance_threshold: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="Search results whose relevance is below this are dropped. Relevance is "
        "the cosine similarity (0-1, negatives count as 0) of all-MiniLM-L6-v2 embeddings of "
        "the query and the result's title + snippet, the same for every provider. 0 keeps all.",
    )
    fetch_top_n: int = Field(
        default=3,
        ge=0,
        le=10,
        description="Pages read after each search: the N most relevant results are fetched "
        "and their main text extracted. 0: researchers see snippets only.",
    )
    fetch_timeout: float = Field(
        default=15.0, ge=1, le=120, description="Seconds allowed for fetching one page."
    )
    max_page_chars: int = Field(
        default=6000,
        ge=500,
        le=100_000,
        description="Characters of extracted text kept per page: the most one source can "
        "contribute to a researcher's context.",
    )
    max_chars_per_turn: int = Field(
        default=24_000,
        ge=2000,
        le=400_000,
        description="Characters of search results and page text one researcher turn receives "
        "in total; page excerpts are shortened to fit.",
    )
    use_memory: bool = Field(
        default=True,
        description="Remember published reports and the passages they cite (in MEMORY_DIR or "
        "the Chroma server at CHROMA_HOST), show similar earlier reports to the orchestrator, "
        "and answer searches from stored passages. false: memory is neither read nor written.",
    )
    memory_min_similarity: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="How similar (MiniLM cosine, 0-1, the relevance scale) an earlier report "
        "must be to the question, and a stored passage to a search query (at least "
        "relevance_threshold too), to be used.",
    )
    memory_max_age_days: float = Field(
        default=30,
        ge=0,
        le=3650,
        description="Stored passages older than this many days are not used to answer "
        "searches (the web is searched instead). 0: never answer from memory.",
    )

    def __init__(self, **values: Any) -> None:
        # LangGraph builds the context as `Context(**dict)`: translate pydantic's report here
        # so every entry point (Studio, SDK, notebook, CLI) gets the same readable error.
        # pydantic-settings also takes private keywords (`_env_file`, `_secrets_dir`, ...)
        # that read files: a per-run context may only name fields.
        reject_unknown_settings(values)
        try:
            super().__init__(**values)
        except ValidationError as error:
            raise ConfigError(hide_secrets(_describe(error, set(values)))) from None

    @model_validator(mode="after")
    def _check_cross_field(self) -> Context:
        for role in ROLES:
            spec = getattr(self, f"{role}_model")
            provider, sep, name = spec.partition(":")
            if not sep or not name or provider not in MODEL_PROVIDERS:
                raise ValueError(
                    f"{role}_model={spec!r} is not a model spec: use 'provider:model' with "
                    f"provider one of {', '.join(MODEL_PROVIDERS)} "
                    f"(e.g. 'local:{DEFAULT_LLM_MODEL}')"
                )
        endpoints = read_endpoints()
        # A missing integration or cloud key stops the run here, when LangGraph builds the
        # context, before any checkpoint or traffic log exists, not as a failed call later.
        used = dict.fromkeys(getattr(self, f"{r}_model").partition(":")[0] for r in ROLES)
        for provider in used:
            problem = endpoints.model_provider_problem(provider)
            if problem:
                roles = [r for r in ROLES if getattr(self, f"{r}_model").startswith(f"{provider}:")]
                named = ", ".join(f"{r}_model={getattr(self, f'{r}_model')!r}" for r in roles)
                raise ValueError(f"{named} {'needs' if len(roles) == 1 else 'need'} {problem}")
        unknown = [name for name in self.fallback_providers if name not in SEARCH_PROVIDERS]
        if unknown:
            raise ValueError(
                f"search_fallback={self.search_fallback!r} names unknown providers "
                f"{', '.join(map(repr, unknown))}: use a comma-separated list of "
                f"{', '.join(SEARCH_PROVIDERS)} (e.g. 'tavily,searxng,ddgs')"
            )
        for name in [self.search_provider, *self.fallback_providers]:
            problem = endpoints.missing_for(name)
            if problem:
                raise ValueError(problem)
        return self

    @property
    def fallback_providers(self) -> list[str]:
        """`search_fallback` as a list of provider names, in order."""
        return [name.strip() for name in self.search_fallback.split(",") if name.strip()]


def reject_unknown_settings(values: Mapping[str, Any]) -> None:
    """Raise `ConfigError` naming every key of a per-run context that is not a setting."""
    fields = Context.model_fields
    unknown = sorted(str(name) for name in values if name not in fields)
    if unknown:
        raise ConfigError(
            hide_secrets(
                f"Invalid configuration: unknown setting(s) {', '.join(unknown)}; "
                f"the settings are: {', '.join(fields)}"
            )
        )


class Endpoints(BaseSettings):
    """Environment-only settings: where the agent connects and with which keys."""

    model_config = SettingsConfigDict(env_ignore_empty=True, extra="ignore", frozen=True)

    llm_base_url: str = "http://localhost:8080/v1"
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(default=600.0, gt=0)
    llm_max_tokens: int = Field(default=8192, ge=256)
    llm_max_retries: int = Field(default=2, ge=0, le=10)
    # LLM_TIMEOUT bounds each read, so a server that trickles bytes or sends only keep-alives
    # never trips it; this bounds one whole model call, retries included (unset: `call_deadline`).
    llm_call_deadline: float | None = Field(default=None, gt=0)
    openai_api_key: SecretStr | None = None
    tavily_api_key: SecretStr | None = None
    tavily_api_base_url: str | None = None
    searxng_url: str | None = None
    # Widening what page fetching may reach is a property of the machine, never of a run.
    fetch_allow_private: bool = False
    fetch_allowed_hosts: str = ""
    # Where the memory lives (see `deep_research.memory.location`): a directory for one
    # process, or a Chroma server shared by several.
    memory_dir: str = ".deep_research/memory"
    chroma_host: str | None = None
    chroma_port: int = Field(default=8000, ge=1, le=65535)

    @property
    def call_deadline(self) -> float:
        """Seconds one model call may take in all: LLM_CALL_DEADLINE, or a generous default.

        The default lets every attempt use its whole LLM_TIMEOUT, and never drops below
        `MIN_CALL_DEADLINE`: mlx_lm.server loads its weights during the first call.
        """
        if self.llm_call_deadline is not None:
            return self.llm_call_deadline
        return max(MIN_CALL_DEADLINE, self.llm_timeout * (self.llm_max_retries + 1))

    def has_key(self, model_provider: str) -> bool:
        """Whether the key a cloud model provider needs is set (`local` needs none)."""
        variable = PROVIDER_KEYS.get(model_provider)
        return variable is None or getattr(self, variable.lower()) is not None

    def model_provider_problem(self, provider: str) -> str | None:
        """What a model provider lacks here (its package, then its credential), or None."""
        package = providers.missing_package(provider)
        if package:
            return f"{package}, which is not installed: {providers.install_hint(provider)}"
        if provider in PROVIDER_KEYS:
            missing = None if self.has_key(provider) else PROVIDER_KEYS[provider]
        else:
            missing = providers.missing_credential(provider, os.environ)
        if missing:
            return (
                f"{missing}: set it in the environment or .env, or use a local: model "
                f"(e.g. 'local:{DEFAULT_LLM_MODEL}')"
            )
        return None

    def missing_for(self, provider: str) -> str | None:
        """Why `provider` cannot be used with this environment, or None when it can."""
        if provider == "tavily" and not self.tavily_api_key:
            return (
                "search provider 'tavily' needs TAVILY_API_KEY in the environment; "
                "set it, or use 'auto', 'searxng' or 'ddgs'"
            )
        if provider == "searxng" and not self.searxng_url:
            return (
                "search provider 'searxng' needs SEARXNG_URL in the environment "
                "(e.g. http://localhost:8888); set it, or use 'auto' or 'ddgs'"
            )
        return None


def _describe(error: ValidationError, given: set[str]) -> str:
    lines = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "context"
        from_env = field not in given and os.environ.get(field.upper())
        source = f" (from {envfile.source_of(field.upper())})" if from_env else ""
        if item["type"] == "value_error" and not item["loc"]:
            lines.append(str(item["msg"]).removeprefix("Value error, "))
            continue
        value = HIDDEN if secrets.SECRET_ENV.search(field) else repr(item["input"])
        lines.append(f"{field}={value}{source}: {item['msg']}")
    return "Invalid configuration: " + "; ".join(lines)


def hide_secrets(text: str) -> str:
    """`text` without the values of secret-named variables or anything shaped like a key."""
    return secrets.Redactor(marker=HIDDEN).text(text)


def load_context(overrides: dict[str, Any] | Context | None = None) -> Context:
    """Build a `Context` from per-run overrides and the environment, with a readable error."""
    if isinstance(overrides, Context):
        return overrides
    return Context(**(overrides or {}))


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's `Context`; LangGraph passes `None` in-process when no context was given."""
    context = runtime.context if runtime is not None else None
    if context is None:
        return load_context()
    if isinstance(context, dict):
        return load_context(context)
    return context


def read_endpoints() -> Endpoints:
    """The environment-only settings: read once, and again only when the environment changes.

    The one place the environment's endpoints and keys are read; everything else asks here.
    """
    fields = Endpoints.model_fields
    snapshot = tuple(sorted((k, v) for k, v in os.environ.items() if k.lower() in fields))
    return _endpoints_for(snapshot)


@functools.lru_cache(maxsize=8)
def _endpoints_for(snapshot: tuple[tuple[str, str], ...]) -> Endpoints:
    return Endpoints()
