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
from deep_research.text.language import setting_language

ROLES = ("clarifier", "orchestrator", "researcher")


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
    report_language: str = Field(
        default="auto",
        max_length=80,
        description="The report's language. auto: the language the question is written in; "
        "else a code (de, zh, ...) or a name (German, Swahili). Headings code adds follow "
        "it where it has them, else stay English; quoted page words are never translated.",
    )
    report_length: ReportLength = Field(
        default="standard",
        description="The report's length when the question does not ask for one: brief "
        "(150-400 words), standard (600-1,200), detailed (1,500-3,000); the completion limit "
        "of the report is sized to it. A form the question asks for (a table, sections) wins.",
    )
    report_in_sections: Literal["off", "auto", "on"] = Field(
        default="auto",
        description="Write the report as sections in parallel once the plan is all researched "
        "(or at the turn cap): one call per researched topic from its findings alone, one for "
        "the title, opening and conclusion from short digests, stitched and checked as one "
        "report. auto: not when the request asks for a table or a comparison across topics; "
        "on: whenever two or more topics were researched; off: one call writes the report. "
        "Never under max_cost_usd (its report shrinks to fit) nor with a single topic.",
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
    max_mcp_calls_per_run: int = Field(
        default=6,
        ge=0,
        le=100,
        description="Calls of MCP servers' tools (MCP_SERVERS_FILE) allowed per thread, "
        "across all researchers; 0: none offered.",
    )
    max_cost_usd: float | None = Field(
        default=None,
        ge=0.000001,
        le=10_000,
        description="Most the thread's model calls may cost, in USD, across all researchers "
        "and resumes; a call whose worst case would pass it is not sent and the report is "
        "written from what the run has. Unset: no budget (costs are still shown).",
    )
    tavily_credit_usd: float = Field(
        default=0.008,
        ge=0,
        le=1,
        description="What one Tavily API credit costs you, in USD (a basic search is one "
        "credit), for the cost shown; SearXNG, DuckDuckGo and the library are free.",
    )
    max_results_per_search: int = Field(
        default=5, ge=1, le=20, description="Results requested from the provider per query."
    )
    search_provider: SearchChoice = Field(
        default="auto",
        description="Search backend. auto: tavily when TAVILY_API_KEY is set, else searxng "
        "when SEARXNG_URL is set, else ddgs. arxiv, openalex, europepmc: papers' abstracts "
        "and open-access PDFs; "
        "wikipedia: articles (all keyless). library: only your documents (deep-research "
        "library add), never the web; search_fallback is then ignored.",
    )
    search_fallback: str = Field(
        default="",
        description="Comma-separated providers tried in order when the main one fails, is "
        "rate-limited or finds nothing, e.g. 'tavily,searxng,ddgs'. Empty: no fallback.",
    )
    scholarly_sources: bool = Field(
        default=True,
        description="With search_provider=auto, researchers may also choose arxiv, "
        "europepmc, openalex and wikipedia (keyless) for a search, e.g. a paper or a drug; "
        "the web stays the default (never when auto resolves to your SearXNG). false: only "
        "the web provider and search_fallback.",
    )
    search_library: bool = Field(
        default=True,
        description="Search your document library (deep-research library add) in every "
        "search step too, beside the web; its passages pass the same relevance filter.",
    )
    relevance_filter: bool = Field(
        default=True,
        description="Score search results with all-MiniLM-L6-v2 and drop those below "
        "relevance_threshold. false: results are kept unscored in the provider's order, and a "
        "run starts without the relevance model (memory still uses it when it is there).",
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
