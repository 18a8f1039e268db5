"""Search APIs answering results of the wrong shape: one malformed result costs only itself."""

from __future__ import annotations

import pytest

from deep_research.search.chain import SearchChain
from deep_research.search.providers import make_provider
from tests.support.fakes.searxng_server import FakeSearxngServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.hostile import MALFORMED, mixed_results


async def test_one_malformed_tavily_result_costs_only_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeTavilyServer(corpus=mixed_results) as tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        found = await SearchChain([make_provider("tavily")]).search("heat pumps", 10)
    assert [(r.url, r.title, r.content) for r in found.results] == [
        ("https://good.example/a", "Good page", "Good facts."),
        ("https://good.example/b", "2024", "3.5"),
    ]
    assert found.results[1].score is None, "a score that is not a number is only dropped"
    assert found.notes == [f"tavily: {len(MALFORMED)} malformed results skipped."]


async def test_one_malformed_searxng_result_costs_only_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeSearxngServer(corpus=mixed_results) as searxng:
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        found = await SearchChain([make_provider("searxng")]).search("heat pumps", 10)
    assert [r.url for r in found.results] == ["https://good.example/a", "https://good.example/b"]
    assert found.notes == [f"searxng: {len(MALFORMED)} malformed results skipped."]
