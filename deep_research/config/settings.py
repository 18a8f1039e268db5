"""The settings of a run: the graph's `Context`, how it is built, and how a node reads it.

Precedence for every `Context` field: per-run context (Studio, SDK, notebook, CLI flags) >
the upper-cased environment variable of the same name > the nearest `.env` (loaded below
the environment by `envfile`) > the default below. Endpoints, keys and anything that
widens what the agent may reach live in `endpoints.Endpoints`, which only the environment
can set; why a setting cannot be used here is worded in `problems`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from deep_research.config.names import (
    DEFAULT_LLM_MODEL,
    LIBRARY_PROVIDER,
    ConfigError,
    SearchChoice,
)
from deep_research.config.problems import (
    explain_invalid,
    hide_secrets,
    models_problem,
    search_problem,
)
from deep_research.config.report_lengths import ReportLength
from deep_research.config.setting_help import HELP
from deep_research.text.language import setting_language

ROLES = ("clarifier", "orchestrator", "researcher")


def _default_model() -> str:
    return f"local:{os.environ.get('LLM_MODEL') or DEFAULT_LLM_MODEL}"


class Context(BaseSettings):
    """Per-run settings, shown as a form in LangGraph Studio; what each means is `setting_help`."""

    model_config = SettingsConfigDict(env_ignore_empty=True, extra="forbid", frozen=True)

    clarifier_model: str = Field(
        default_factory=_default_model, description=HELP["clarifier_model"]
    )
    orchestrator_model: str = Field(
        default_factory=_default_model, description=HELP["orchestrator_model"]
    )
    researcher_model: str = Field(
        default_factory=_default_model, description=HELP["researcher_model"]
    )
    clarifier_temperature: float | None = Field(
        default=None, ge=0, le=2, description=HELP["clarifier_temperature"]
    )
    orchestrator_temperature: float | None = Field(
        default=None, ge=0, le=2, description=HELP["orchestrator_temperature"]
    )
    researcher_temperature: float | None = Field(
        default=None, ge=0, le=2, description=HELP["researcher_temperature"]
    )
    local_thinking: Literal["off", "on", "server"] = Field(
        default="off", description=HELP["local_thinking"]
    )
    one_slot_server: Literal["auto", "on", "off"] = Field(
        default="auto", description=HELP["one_slot_server"]
    )
    allow_clarification: bool = Field(default=True, description=HELP["allow_clarification"])
    max_clarification_rounds: int = Field(
        default=1, ge=0, le=5, description=HELP["max_clarification_rounds"]
    )
    report_language: str = Field(default="auto", max_length=80, description=HELP["report_language"])
    report_length: ReportLength = Field(default="standard", description=HELP["report_length"])
    report_in_sections: Literal["off", "auto", "on"] = Field(
        default="auto", description=HELP["report_in_sections"]
    )
    review_plan: bool = Field(default=False, description=HELP["review_plan"])
    max_plan_reviews: int = Field(default=2, ge=1, le=10, description=HELP["max_plan_reviews"])
    max_researchers_per_turn: int = Field(
        default=3, ge=1, le=16, description=HELP["max_researchers_per_turn"]
    )
    max_research_calls_per_reply: int = Field(
        default=6, ge=1, le=50, description=HELP["max_research_calls_per_reply"]
    )
    max_orchestrator_turns: int = Field(
        default=6, ge=1, le=50, description=HELP["max_orchestrator_turns"]
    )
    max_todo_updates: int = Field(default=3, ge=1, le=20, description=HELP["max_todo_updates"])
    max_todo_only_turns: int = Field(
        default=2, ge=1, le=10, description=HELP["max_todo_only_turns"]
    )
    max_repeated_calls: int = Field(default=3, ge=2, le=10, description=HELP["max_repeated_calls"])
    max_researcher_turns: int = Field(
        default=4, ge=1, le=20, description=HELP["max_researcher_turns"]
    )
    max_searches_per_run: int = Field(
        default=25, ge=0, le=500, description=HELP["max_searches_per_run"]
    )
    max_mcp_calls_per_run: int = Field(
        default=6, ge=0, le=100, description=HELP["max_mcp_calls_per_run"]
    )
    max_cost_usd: float | None = Field(
        default=None, ge=0.000001, le=10_000, description=HELP["max_cost_usd"]
    )
    tavily_credit_usd: float = Field(
        default=0.008, ge=0, le=1, description=HELP["tavily_credit_usd"]
    )
    max_results_per_search: int = Field(
        default=5, ge=1, le=20, description=HELP["max_results_per_search"]
    )
    search_provider: SearchChoice = Field(default="auto", description=HELP["search_provider"])
    search_fallback: str = Field(default="", description=HELP["search_fallback"])
    scholarly_sources: bool = Field(default=True, description=HELP["scholarly_sources"])
    search_library: bool = Field(default=True, description=HELP["search_library"])
    relevance_filter: bool = Field(default=True, description=HELP["relevance_filter"])
    relevance_threshold: float = Field(
        default=0.25, ge=0, le=1, description=HELP["relevance_threshold"]
    )
    fetch_top_n: int = Field(default=3, ge=0, le=10, description=HELP["fetch_top_n"])
    fetch_timeout: float = Field(default=15.0, ge=1, le=120, description=HELP["fetch_timeout"])
    max_page_chars: int = Field(
        default=6000, ge=500, le=100_000, description=HELP["max_page_chars"]
    )
    max_chars_per_turn: int = Field(
        default=24_000, ge=2000, le=400_000, description=HELP["max_chars_per_turn"]
    )
    use_memory: bool = Field(default=True, description=HELP["use_memory"])
    memory_min_similarity: float = Field(
        default=0.5, ge=0, le=1, description=HELP["memory_min_similarity"]
    )
    memory_max_age_days: float = Field(
        default=30, ge=0, le=3650, description=HELP["memory_max_age_days"]
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
            raise ConfigError(hide_secrets(explain_invalid(error, set(values)))) from None

    @field_validator("report_language")
    @classmethod
    def _known_language(cls, value: str) -> str:
        setting_language(value)  # raises with what is allowed
        return value

    @model_validator(mode="after")
    def _check_cross_field(self) -> Context:
        # A missing integration or cloud key stops the run here, when LangGraph builds the
        # context, before any checkpoint or traffic log exists, not as a failed call later.
        models = {f"{role}_model": getattr(self, f"{role}_model") for role in ROLES}
        problem = models_problem(models) or search_problem(
            self.search_provider, self.search_fallback, self.fallback_providers
        )
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


def follow_up_settings(thread: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """A follow-up's settings: the thread's under the ones given now, except that it never
    lifts the thread's search or MCP-call cap (the lower of the two holds; a thread started
    without one had the default) nor leaves a library-only thread for the web (`ConfigError`)."""
    merged = {**thread, **given}
    for cap in ("max_searches_per_run", "max_mcp_calls_per_run"):
        had = thread.get(cap, Context.model_fields[cap].default)
        asked = given.get(cap)
        if _count(had) and _count(asked):
            merged[cap] = min(had, asked)
    started = thread.get("search_provider")
    now = given.get("search_provider", LIBRARY_PROVIDER)
    if started == LIBRARY_PROVIDER and now != LIBRARY_PROVIDER:
        raise ConfigError(
            "this thread searches only your own library (search_provider=library): a "
            f"follow-up keeps to it, so search_provider={str(now)[:40]!r} is refused. Leave "
            "it unset, or ask the question as a new run."
        )
    return merged


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
