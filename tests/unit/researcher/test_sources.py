"""researcher/sources.py: the search tool's `source` enum and the source a call names."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.config.settings import load_context
from deep_research.researcher.graph import WebSearch
from deep_research.researcher.sources import chosen_source, search_tool


def test_the_search_tool_offers_the_enabled_sources_as_an_enum_only_when_there_is_a_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    lone = load_context({"search_provider": "arxiv"})
    assert search_tool(lone, WebSearch) is WebSearch
    context = load_context({"search_provider": "auto", "search_fallback": "arxiv,europepmc"})
    schema = search_tool(context, WebSearch).model_json_schema()
    assert schema["title"] == "web_search"
    source = schema["properties"]["source"]
    assert source["anyOf"][0]["enum"] == ["ddgs", "arxiv", "europepmc"]
    assert "medicine" in source["description"] and "default ddgs" in source["description"]

    def call(args: object) -> Any:
        return {"name": "web_search", "args": args, "id": "c", "type": "tool_call"}

    assert chosen_source(call({"queries": ["q"], "source": "arxiv"}), context) == ("arxiv", "")
    assert chosen_source(call({"queries": ["q"]}), context) == (None, "")
    # The default named is the same search as the default left out: one cache key, one
    # count against the cap, and "already searched" for a repeat.
    assert chosen_source(call({"queries": ["q"], "source": "ddgs"}), context) == (None, "")
    unknown, note = chosen_source(call({"queries": ["q"], "source": "pubmed"}), context)
    assert unknown is None and "not enabled" in note and "ddgs, arxiv, europepmc" in note
