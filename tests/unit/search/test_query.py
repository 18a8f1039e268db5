"""search/query.py: one query end to end over in-process fakes (scores from the result's score)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import pytest

from deep_research.embedding.encoder import EncoderError
from deep_research.embedding.files import WeightsUnavailable
from deep_research.embedding.native import ProcessExiting
from deep_research.search import relevance
from deep_research.search.budget import Grant
from deep_research.search.cache import RunCache
from deep_research.search.chain import SearchChain
from deep_research.search.fetch import Page, PageFetcher
from deep_research.search.query import Finding, Searcher
from deep_research.search.types import SearchError, SearchResult, Years


class Provider:
    name, max_concurrency = "scripted", 4

    def __init__(self, results: list[SearchResult], fail: bool = False) -> None:
        self.results, self.fail, self.queries = results, fail, []  # type: ignore[var-annotated]

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        self.queries.append(query)
        if self.fail:
            raise SearchError("scripted failed: HTTP 500")
        return self.results[:max_results]


class Fetcher:
    def __init__(self) -> None:
        self.urls: list[str] = []

    async def fetch(self, url: str) -> Page:
        self.urls.append(url)
        return Page(url, text=f"page text of {url}")


RESULTS = [
    SearchResult("https://a.example/low", "Low", "low", score=0.1),
    SearchResult("https://a.example/high", "High", "high", score=0.9),
    SearchResult("file:///docs/a.pdf#page=2", "Doc", "doc", score=0.8),
    SearchResult("javascript:alert(1)", "Js", "js", score=0.7),
]


@pytest.fixture(autouse=True)
def scores_are_the_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    async def score(query: str, results: Sequence[SearchResult]) -> list[float]:
        return [r.score or 0.0 for r in results]

    monkeypatch.setattr(relevance, "score_results", score)


def searcher(provider: Provider, granted: int = 5, **fields: object) -> tuple[Searcher, Fetcher]:
    fetcher = Fetcher()
    grant = Grant(granted, share=granted, counted_before=0, cap=granted)
    made = Searcher(
        SearchChain([provider]),
        RunCache(asyncio.get_running_loop()),
        grant,
        "owner",
        cast(PageFetcher, fetcher),
        max_results=10,
        threshold=0.5,
        fetch_top_n=5,
        **fields,  # type: ignore[arg-type]
    )
    return made, fetcher


async def test_results_below_the_threshold_are_dropped_and_only_web_pages_read() -> None:
    run, fetcher = searcher(Provider(RESULTS))
    outcome = await run.run("heat pumps")
    assert [f.result.url for f in outcome.findings] == [r.url for r in RESULTS[1:]]
    assert outcome.dropped == 1 and not outcome.error
    assert fetcher.urls == [RESULTS[1].url], "file: and javascript: URLs are never fetched"
    assert outcome.findings[0].page and outcome.findings[1].page is None


async def test_a_result_that_is_its_page_s_text_is_not_fetched_again() -> None:
    abstract = SearchResult("https://arxiv.org/abs/2101.00001v1", "P", "The abstract.", 0.9, True)
    run, fetcher = searcher(Provider([abstract, RESULTS[1]]))
    outcome = await run.run("heat pumps")
    assert fetcher.urls == [RESULTS[1].url], "an abstract's abs page is not fetched again"
    kept = outcome.findings[0]
    assert kept.result == abstract and kept.page is None
    assert kept.retrieved_text == "The abstract."


async def test_unscored_keeps_every_result_in_the_providers_order_without_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def no_model(query: str, results: Sequence[SearchResult]) -> list[float]:
        raise AssertionError("relevance_filter=false never asks the model")

    monkeypatch.setattr(relevance, "score_results", no_model)
    run, fetcher = searcher(Provider(RESULTS), scored=False)
    outcome = await run.run("heat pumps")
    assert [f.result.url for f in outcome.findings] == [r.url for r in RESULTS]
    assert outcome.dropped == 0
    assert fetcher.urls == [RESULTS[0].url, RESULTS[1].url], "the provider's first pages read"


def scoring_fails(monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    async def broken(query: str, results: Sequence[SearchResult]) -> list[float]:
        raise failure

    monkeypatch.setattr(relevance, "score_results", broken)


@pytest.mark.parametrize(
    "failure",
    [
        EncoderError("onnxruntime, which computes the relevance model, could not be imported"),
        EncoderError("onnxruntime failed a pass: [ONNXRuntimeError] : 1 : FAIL : bad_alloc"),
        ProcessExiting("the process is exiting: no new pass begins"),
    ],
)
async def test_a_model_that_cannot_score_keeps_every_result_in_order_and_says_so(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    scoring_fails(monkeypatch, failure)
    seen: list[dict[str, object]] = []
    monkeypatch.setattr(relevance.progress, "emit", lambda e, **f: seen.append({"e": e, **f}))
    run, fetcher = searcher(Provider(RESULTS))
    outcome = await run.run("heat pumps")
    assert [f.result.url for f in outcome.findings] == [r.url for r in RESULTS]
    assert outcome.dropped == 0 and not outcome.error
    assert fetcher.urls == [RESULTS[0].url, RESULTS[1].url], "the provider's first pages read"
    assert {"e": "relevance_off", "id": run.owner, "reason": str(failure)} in seen


@pytest.mark.parametrize(
    "failure",
    [
        KeyError("a bug of ours"),
        # Each search would try the download again: the search says what to do instead.
        WeightsUnavailable("the relevance model's files are not on this machine"),
    ],
)
async def test_any_other_scoring_failure_is_not_taken_for_a_model_that_cannot_compute(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    scoring_fails(monkeypatch, failure)
    run, _ = searcher(Provider(RESULTS))
    with pytest.raises(type(failure)):
        await run.run("heat pumps")


async def test_a_repeated_query_spends_nothing_and_says_so() -> None:
    provider = Provider(RESULTS)
    run, fetcher = searcher(provider, granted=1)
    await run.run("heat pumps")
    again = await run.run("  HEAT pumps ")
    assert provider.queries == ["heat pumps"] and run.grant.sent == 1
    assert any("Already searched" in note for note in again.notes)
    assert fetcher.urls == [RESULTS[1].url], "nor is its page fetched again"


async def test_a_spent_grant_refuses_without_asking_the_provider() -> None:
    provider = Provider(RESULTS)
    outcome = await searcher(provider, granted=0)[0].run("q")
    assert provider.queries == [] and "Search cap reached" in outcome.error and not outcome.findings


async def test_a_failed_search_is_an_outcome_not_an_exception() -> None:
    outcome = await searcher(Provider([], fail=True))[0].run("q")
    assert outcome.error == "Search failed: scripted failed: HTTP 500" and not outcome.findings


async def test_memory_that_answers_spends_no_search() -> None:
    remembered = [Finding(RESULTS[1], 0.9, Page(RESULTS[1].url, text="stored"), "2026-01-01")]

    async def recall(query: str) -> list[Finding]:
        return remembered

    provider = Provider(RESULTS)
    outcome = await searcher(provider, recall=recall)[0].run("q")
    assert outcome.findings == remembered and provider.queries == []
    assert outcome.findings[0].retrieved_text == "high\n\nstored"


async def test_library_passages_join_by_relevance_and_a_library_failure_is_a_note() -> None:
    library = Provider([SearchResult("file:///docs/b.txt", "B", "b", score=0.95)])
    library.name = "library"
    outcome = await searcher(Provider(RESULTS), library=library)[0].run("q")
    assert outcome.findings[0].result.url == "file:///docs/b.txt" and outcome.dropped == 1
    broken = Provider([], fail=True)
    broken.name = "library"
    run, _ = searcher(Provider(RESULTS), library=broken)
    outcome = await run.run("q")
    assert outcome.notes == ["Your library was not searched: scripted failed: HTTP 500"]
    assert len(outcome.findings) == 3, "the web's findings are kept"
    # Asked again: the search's own note is kept beside the library's.
    again = await run.run("q")
    assert again.notes == [
        "Already searched in this run: same results as before, no search used.",
        "Your library was not searched: scripted failed: HTTP 500",
    ]


class Tavily(Provider):
    name = "tavily"


async def test_a_tavily_search_sent_costs_one_credit_and_a_repeat_or_free_one_nothing() -> None:
    run, _ = searcher(Tavily(RESULTS), credit_usd=0.008)
    await run.run("heat pumps")
    await run.run("heat pumps")  # the run's cache answers: no credit
    assert run.grant.sent == 1 and run.grant.cost == 8_000  # µUSD
    free, _ = searcher(Provider(RESULTS), credit_usd=0.008)
    await free.run("heat pumps")
    assert free.grant.sent == 1 and free.grant.cost == 0


class Crash(BaseException):
    """Stands in for the process dying mid-step."""


async def test_whether_memory_answered_is_saved_so_a_step_run_again_finds_each_answer() -> None:
    """Answers are found by their call's place in the step. q1 was answered from memory,
    q2 by a search; the step stopped, and by the resume q1's passages had aged out of
    memory. q2's saved answer is still found: it is not sent again."""
    from typing import Any, TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph

    class State(TypedDict):
        found: list[int]

    remembered = [Finding(RESULTS[1], 0.9, Page(RESULTS[1].url, text="stored"), "2026-01-01")]
    memory = {"q1": remembered}
    stop = {"now": True}
    provider = Provider(RESULTS)

    async def recall(query: str) -> list[Finding]:
        return memory.get(query, [])

    async def step(state: State) -> dict[str, Any]:
        made, _ = searcher(provider, recall=recall)
        started = [await made.start(query) for query in ("q1", "q2")]
        outcomes = [(await made.outcome(pending))[0] for pending in started]
        if stop["now"]:
            raise Crash()
        return {"found": [len(outcome.findings) for outcome in outcomes]}

    builder = StateGraph(State)
    builder.add_node(step)
    builder.add_edge(START, "step")
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    with pytest.raises(Crash):
        await graph.ainvoke({"found": []}, config)
    assert provider.queries == ["q2"]
    memory.clear()  # q1's passages aged out, or the store is down
    stop["now"] = False
    out = await graph.ainvoke(None, config)
    assert provider.queries == ["q2"], "q2's answer was saved: it is not sent again"
    assert out["found"][1] > 0


async def test_the_same_query_over_other_years_is_another_search_counted_like_any() -> None:
    provider = Provider(RESULTS)
    plain, _ = searcher(provider, granted=3)
    dated = replace(plain, years=Years(2019, 2023))
    assert plain.key("heat pumps") != dated.key("heat pumps")
    assert dated.key("heat pumps") != replace(plain, years=Years(2019, None)).key("heat pumps")
    assert dated.key("heat pumps").endswith(" #2019-2023")
    await plain.run("heat pumps")
    first = await dated.run("heat pumps")
    again = await dated.run(" Heat  pumps")
    assert provider.queries == ["heat pumps", "heat pumps"] and plain.grant.sent == 2
    assert not any("Already searched" in note for note in first.notes)
    assert any("Already searched" in note for note in again.notes)


async def test_memory_does_not_answer_a_search_limited_to_years() -> None:
    async def recall(query: str) -> list[Finding]:
        return [Finding(SearchResult("https://m.example/", "M", "remembered"), 0.9)]

    provider = Provider(RESULTS)
    run, _ = searcher(provider, recall=recall)
    dated = await replace(run, years=Years(2019, 2023)).run("heat pumps")
    assert provider.queries == ["heat pumps"] and run.grant.sent == 1
    assert "https://m.example/" not in [f.result.url for f in dated.findings]
