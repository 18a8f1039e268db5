"""search/step.py: a batch of queries as the researcher sends it, junk refused before it counts."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import cast

import pytest

from deep_research.search.budget import Grant
from deep_research.search.cache import RunCache
from deep_research.search.chain import SearchChain
from deep_research.search.fetch import Page, PageFetcher
from deep_research.search.query import Searcher
from deep_research.search.step import SearchSession
from deep_research.search.types import SearchResult


class Provider:
    name, max_concurrency = "scripted", 4

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        self.queries.append(query)
        return [SearchResult(f"https://a.example/{len(self.queries)}", query, "snippet")]


class Fetcher:
    async def fetch(self, url: str) -> Page:
        return Page(url, text="")


def session(provider: Provider, granted: int) -> tuple[SearchSession, Grant]:
    grant = Grant(granted, share=granted, counted_before=0, cap=granted)
    searcher = Searcher(
        SearchChain([provider]),
        RunCache(asyncio.get_running_loop()),
        grant,
        "owner",
        cast(PageFetcher, Fetcher()),
        max_results=5,
        threshold=0.0,
        fetch_top_n=0,
        scored=False,
    )
    return SearchSession(searcher, "topic", 1000), grant


async def test_junk_queries_are_answered_with_why_and_nothing_is_sent_or_counted() -> None:
    provider = Provider()
    searching, grant = session(provider, granted=3)
    answer = await searching.answer(["", "query1", "&lt;query&gt;"], max_chars=5000)
    assert provider.queries == [] and grant.taken == 0 and grant.used == 0
    assert answer.text.count("Not searched: ") == 3
    assert answer.trace["refused"] == ["", "query1", "<query>"]


async def test_entity_soup_is_sent_cleaned_and_junk_beside_it_keeps_the_order() -> None:
    provider = Provider()
    searching, grant = session(provider, granted=1)
    answer = await searching.answer(
        ["query", "&lt;b&gt;heat pumps&lt;/b&gt;", "your query here"], max_chars=5000
    )
    assert provider.queries == ["heat pumps"]
    assert grant.used == 1, "one search counted, though three queries were asked"
    sections = answer.text.split("## ")[1:]
    assert [s.splitlines()[0] for s in sections] == ['"query"', '"heat pumps"', '"your query here"']
    assert "Search cap reached" not in answer.text


def test_the_enabled_sources_are_the_chain_s_with_a_choice_and_never_the_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from deep_research.config.settings import load_context
    from deep_research.search.step import enabled_sources

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    chained = load_context({"search_provider": "auto", "search_fallback": "arxiv,ddgs,library"})
    # `auto`'s own web provider, the fallbacks, then the keyless sources it offers.
    assert enabled_sources(chained, scholarly=True) == [
        "ddgs",
        "arxiv",
        "europepmc",
        "openalex",
        "wikipedia",
    ]
    web_only = {"search_provider": "auto", "scholarly_sources": False}
    assert enabled_sources(load_context(web_only), scholarly=True) == []
    # `auto` resolved to the user's own SearXNG: its queries stay there.
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:8888")
    assert enabled_sources(load_context({"search_provider": "auto"}), scholarly=True) == []
    monkeypatch.delenv("SEARXNG_URL")
    named = load_context({"search_provider": "ddgs", "search_fallback": "arxiv"})
    assert enabled_sources(named, scholarly=True) == ["ddgs", "arxiv"], (
        "a provider named offers nothing more"
    )
    assert enabled_sources(load_context({"search_provider": "wikipedia"}), scholarly=True) == []
    private = load_context({"search_provider": "library", "search_fallback": "arxiv,ddgs"})
    assert enabled_sources(private, scholarly=True) == []
    # A topic the orchestrator did not mark scholarly: the run's chain alone, as named.
    assert enabled_sources(chained, scholarly=False) == ["ddgs", "arxiv"]
    assert enabled_sources(load_context({}), scholarly=False) == []


def test_the_dated_sources_of_a_topic_are_those_it_may_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from deep_research.config.settings import load_context
    from deep_research.search.step import dated_sources

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    auto = load_context({})
    assert dated_sources(auto, scholarly=True) == ["arxiv", "europepmc", "openalex"]
    assert dated_sources(auto, scholarly=False) == []
    named = load_context({"search_provider": "ddgs", "search_fallback": "openalex"})
    assert dated_sources(named, scholarly=False) == ["openalex"]


async def test_a_named_source_is_asked_first_and_is_a_search_of_its_own() -> None:
    default, other = Provider(), Provider()
    other.name = "other"  # type: ignore[misc]
    searching, grant = session(default, granted=3)
    chains = {"other": SearchChain([other, default]), "scripted": SearchChain([default, other])}
    searching = replace(searching, chains=chains)
    await searching.answer(["heat pumps"], max_chars=5000)
    await searching.answer(["heat pumps"], max_chars=5000, source="other")
    again = await searching.answer(["heat pumps"], max_chars=5000, source="other")
    assert default.queries == ["heat pumps"] and other.queries == ["heat pumps"]
    assert grant.used == 2 and "Already searched in this run" in again.text
