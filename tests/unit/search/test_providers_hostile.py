"""Search APIs answering results of the wrong shape: one malformed result costs only itself."""

from __future__ import annotations

import pytest

from deep_research.search.api_call import MAX_ANSWER_BYTES
from deep_research.search.chain import SearchChain
from deep_research.search.providers import make_provider
from deep_research.search.types import SearchError
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


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("FLOOD heat pumps", f"its answer is over {MAX_ANSWER_BYTES:,} bytes, not read"),
        ("NOT_JSON heat pumps", "its answer is not JSON"),
        ("NESTED heat pumps", "its answer is not JSON"),  # past Python's recursion limit
    ],
)
async def test_a_searxng_answer_past_the_cap_or_not_json_is_a_search_error(
    query: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endless body is cut at api_call's byte cap, as the scholarly APIs' are, and the
    server's own text is never quoted back to the model."""
    with FakeSearxngServer() as searxng:
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        with pytest.raises(SearchError) as raised:
            await make_provider("searxng").search(query, 10)
    assert str(raised.value) == f"searxng failed for {query!r}: {said}"
    assert "maintenance" not in str(raised.value)


async def test_a_searxng_on_this_machine_is_asked_past_the_environments_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The instance is the operator's, usually on this machine or network: a proxy set for
    the web (here one that refuses everything) does not stand between."""
    with FakeSearxngServer() as searxng:
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, "http://127.0.0.1:9")
        monkeypatch.delenv("NO_PROXY", raising=False)
        found = await make_provider("searxng").search("heat pumps", 10)
    assert len(found) == 3
