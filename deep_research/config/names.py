"""The names a setting may take, and the error for a value outside them.

Light on purpose (no pydantic, no LangGraph): `deep-research --help` lists these without
importing `deep_research.config.settings`, which costs most of a second.
"""

from __future__ import annotations

from typing import Literal, get_args

from deep_research.config.model_providers import PROVIDERS
from deep_research.errors import DeepResearchError

DEFAULT_LLM_MODEL = "mlx-community/Qwen3-8B-4bit"
# `local` first: the default; the rest are `init_chat_model`'s names (see providers.py).
MODEL_PROVIDERS = ("local", *PROVIDERS)
# The one list of search-provider names (a name, not the `search.types.SearchProvider`
# protocol a provider implements). "library": the documents added with `deep-research
# library add`, and nothing else. "arxiv", "wikipedia", "openalex", "europepmc": keyless
# scholarly and encyclopedic sources (ARXIV_API_URL, WIKIPEDIA_API_URL, ...).
SearchProviderName = Literal[
    "tavily", "searxng", "ddgs", "library", "arxiv", "wikipedia", "openalex", "europepmc"
]
# What a setting may say: a provider, or `auto` (the best one this environment allows).
SearchChoice = Literal["auto", SearchProviderName]
SEARCH_PROVIDERS: tuple[SearchProviderName, ...] = get_args(SearchProviderName)
SEARCH_CHOICES: tuple[SearchChoice, ...] = get_args(SearchChoice)
LIBRARY_PROVIDER: SearchProviderName = "library"
# `Context`'s fields in declaration order, for the CLI's help (a test keeps them equal).
SETTING_NAMES = (
    "clarifier_model",
    "orchestrator_model",
    "researcher_model",
    "clarifier_temperature",
    "orchestrator_temperature",
    "researcher_temperature",
    "local_thinking",
    "one_slot_server",
    "allow_clarification",
    "max_clarification_rounds",
    "report_language",
    "report_length",
    "report_in_sections",
    "review_plan",
    "max_plan_reviews",
    "max_researchers_per_turn",
    "max_research_calls_per_reply",
    "max_orchestrator_turns",
    "max_todo_updates",
    "max_todo_only_turns",
    "max_repeated_calls",
    "max_researcher_turns",
    "max_searches_per_run",
    "max_mcp_calls_per_run",
    "max_cost_usd",
    "tavily_credit_usd",
    "max_results_per_search",
    "search_provider",
    "search_fallback",
    "scholarly_sources",
    "search_library",
    "relevance_filter",
    "relevance_threshold",
    "fetch_top_n",
    "fetch_timeout",
    "max_page_chars",
    "max_chars_per_turn",
    "use_memory",
    "memory_min_similarity",
    "memory_max_age_days",
)


class ConfigError(DeepResearchError, ValueError):
    """A configuration value is invalid; the message names the field, value and what is allowed."""
