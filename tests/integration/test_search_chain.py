"""The search chain as researchers meet it: fallbacks in order (transient errors retried,
rate limits skipped, an empty answer passed on), each provider's own concurrency limit,
SearXNG's JSON API, and the run's cache shared by concurrent askers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from deep_research.search import chain as chain_module
from deep_research.search.cache import OnceMap, run_cache
from deep_research.search.chain import SearchChain
from deep_research.search.providers import make_provider
from deep_research.search.types import SearchError
from tests.support.fakes.searxng_server import FakeSearxngServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.graph_scripts import (
    NO_CLARIFY,
    orchestrator_fanning_out,
    run,
    script_for,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch, researcher_views


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chain_module, "BACKOFF_BASE", 0.0)


@pytest.fixture
def providers(
    monkeypatch: pytest.MonkeyPatch, fast_retries: None
) -> Iterator[tuple[FakeTavilyServer, FakeSearxngServer, list[str]]]:
    """Real Tavily and SearXNG clients against local fakes; ddgs stopped at its library."""
    from ddgs.ddgs import DDGS

    ddgs_queries: list[str] = []

    def text(self: object, query: str, max_results: int = 5) -> list[dict[str, str]]:
        ddgs_queries.append(query)
        return [{"href": "https://ddg.example/1", "title": "DDG hit", "body": "From ddgs."}]

    monkeypatch.setattr(DDGS, "text", text)
    with FakeTavilyServer() as tavily, FakeSearxngServer() as searxng:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        yield tavily, searxng, ddgs_queries


async def test_fallback_order_retries_transient_errors_and_skips_rate_limits(
    providers: tuple[FakeTavilyServer, FakeSearxngServer, list[str]],
) -> None:
    tavily, searxng, ddgs_queries = providers
    chain = SearchChain([make_provider(n) for n in ("tavily", "searxng", "ddgs")])
    found = await chain.search("FAIL_SEARCH RATE_LIMIT heat pumps", 3)
    assert found.provider == "ddgs" and found.results[0].url == "https://ddg.example/1"
    assert found.notes == [
        "tavily failed (tavily failed for 'FAIL_SEARCH RATE_LIMIT heat pumps': HTTP 500); "
        "fell back to searxng.",
        "searxng was rate-limited; fell back to ddgs.",
    ]
    assert len(tavily.queries) == chain_module.RETRY_ATTEMPTS, "a 500 is retried"
    assert len(searxng.queries) == 1, "a 429 is not retried: the next provider is asked"
    assert ddgs_queries == ["FAIL_SEARCH RATE_LIMIT heat pumps"]


async def test_a_provider_that_finds_nothing_falls_back_and_all_failing_is_an_error(
    providers: tuple[FakeTavilyServer, FakeSearxngServer, list[str]],
) -> None:
    chain = SearchChain([make_provider("searxng"), make_provider("ddgs")])
    found = await chain.search("NO_RESULTS heat pumps", 3)
    assert found.provider == "ddgs" and found.notes == ["searxng found nothing; fell back to ddgs."]
    failing = SearchChain([make_provider("tavily"), make_provider("searxng")])
    with pytest.raises(SearchError, match="every provider failed") as error:
        await failing.search("FAIL_SEARCH again", 3)
    assert str(error.value) == (
        "every provider failed for 'FAIL_SEARCH again': "
        "tavily failed (tavily failed for 'FAIL_SEARCH again': HTTP 500); "
        "searxng failed (searxng failed for 'FAIL_SEARCH again': HTTP 500)"
    )


async def test_fallbacks_are_told_to_the_researcher_and_kept_in_the_trace(
    providers: tuple[FakeTavilyServer, FakeSearxngServer, list[str]],
    use_script: Callable[..., ScriptedChatModel],
) -> None:
    model = use_script(script_for(orchestrator_fanning_out("RATE_LIMIT pumps")))
    context = {"search_provider": "searxng", "search_fallback": "ddgs", "fetch_top_n": 0}
    await run({**NO_CLARIFY, **context, "relevance_threshold": 0})
    (view,) = researcher_views(model)
    assert "searxng was rate-limited; fell back to ddgs." in str(view.content)
    assert view.artifact["notes"] == ["searxng was rate-limited; fell back to ddgs."]
    assert "[DDG hit](https://ddg.example/1)" in str(view.content)


async def test_searxng_reads_the_json_api_and_auto_prefers_it_without_a_tavily_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeSearxngServer() as searxng:
        assert make_provider("auto").name == "ddgs"
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        provider = make_provider("auto")
        assert provider.name == "searxng"
        results = await provider.search("heat pumps", 2)
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
        assert make_provider("auto").name == "tavily"
    assert [r.url for r in results] == [
        "https://searx.example/heat-pumps/0",
        "https://searx.example/heat-pumps/1",
    ]
    assert results[0].score == 4.5, "SearXNG's unbounded score is kept only as information"


async def test_each_provider_has_its_own_concurrency_limit(scripted_search: ScriptedSearch) -> None:
    scripted_search.max_concurrency = 1
    scripted_search.hold_until(in_flight=2, timeout=0.2)  # never reached when the limit holds
    chain = SearchChain([scripted_search])
    await asyncio.gather(*(chain.search(f"q{i}", 1) for i in range(3)))
    assert scripted_search.max_in_flight == 1 and len(scripted_search.queries) == 3


async def test_concurrent_askers_share_one_in_flight_task_and_failures_are_not_kept() -> None:
    once: OnceMap[str] = OnceMap()
    gate = asyncio.Event()
    starts: list[str] = []

    async def work() -> str:
        starts.append("started")
        await gate.wait()
        return "page"

    askers = [asyncio.ensure_future(once.get("url", work)) for _ in range(3)]
    await asyncio.sleep(0)  # let all three ask before the work finishes
    gate.set()
    assert [await a for a in askers] == [("page", True), ("page", False), ("page", False)]
    assert starts == ["started"]

    async def boom() -> str:
        raise SearchError("provider down")

    with pytest.raises(SearchError):
        await once.get("query", boom)
    assert await once.get("query", work) == ("page", True), "a failure is retried later"


async def test_run_cache_is_per_thread_and_bounded() -> None:
    assert run_cache("thread-a") is run_cache("thread-a")
    assert run_cache("thread-a") is not run_cache("thread-b")
    first = run_cache("thread-0")
    for i in range(1, 40):
        run_cache(f"thread-{i}")
    assert run_cache("thread-0") is not first, "old runs are forgotten"
