"""search/query.py: a search scored as it answers, inside its durable call, and the step
taking those scores; a step run again after a stop scoring what it reads back; library
passages scored at each ask."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from deep_research.embedding.encoder import EncoderError
from deep_research.embedding.files import WeightsUnavailable
from deep_research.search import relevance
from deep_research.search.query import Pending
from deep_research.search.types import SearchResult
from tests.unit.search.test_query import RESULTS, Provider, scoring_fails, searcher


async def test_a_search_is_scored_as_it_answers_and_a_resumed_one_when_read_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The durable call's answer is saved before the step reads it: the scoring has
    # started by then, and the step takes its scores rather than scoring again.
    scored: list[str] = []
    gate = asyncio.Event()

    async def score(query: str, results: Sequence[SearchResult]) -> list[float]:
        scored.append(query)
        await gate.wait()
        return [r.score or 0.0 for r in results]

    monkeypatch.setattr(relevance, "score_results", score)
    run, _ = searcher(Provider(RESULTS))
    key = run.key("heat pumps")
    stored = await run._stored(key, "heat pumps")
    await asyncio.sleep(0)
    assert scored == ["heat pumps"], "scoring started before the answer was handed back"
    gate.set()
    outcome, to_read = await run.outcome(run_pending(stored))
    assert scored == ["heat pumps"] and not run.scoring, "its scores taken, not computed again"
    assert [f.result.url for f in outcome.findings] == [r.url for r in RESULTS[1:]]
    # A step run again after a stop reads the saved answer back: `_stored` does not run,
    # so the step scores it itself, once.
    again, _ = searcher(Provider(RESULTS))
    resumed, _ = await again.outcome(run_pending(stored))
    assert scored == ["heat pumps"] * 2 and resumed.findings == outcome.findings
    assert to_read == [RESULTS[1].url]


async def test_a_scoring_that_fails_as_the_search_answers_fails_the_read_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scoring_fails(monkeypatch, WeightsUnavailable("no weights here, and no download"))
    run, _ = searcher(Provider(RESULTS))
    stored = await run._stored(run.key("q"), "q")
    assert run.scoring, "started as the search answered"
    with pytest.raises(WeightsUnavailable, match="no weights"):
        await run.outcome(run_pending(stored, "q"))
    assert not run.scoring, "the scoring started early is the one that failed the read"


def run_pending(stored: dict[str, object], query: str = "heat pumps") -> Pending:
    """Query `query`'s durable answer as the step reads it back."""

    async def saved() -> dict[str, object]:
        return stored

    return Pending(query, searched=saved())


async def test_library_passages_kept_unscored_once_are_scored_when_asked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The passages are cached for the run, their scores are not: a pass that failed once
    (every passage kept, as at 1.0) is not what the same query gets later in the run."""
    library = Provider([SearchResult("file:///docs/b.txt", "B", "b", score=0.05)])
    library.name = "library"
    fails = [EncoderError("the model ran out of memory in a pass over 2 texts")]

    async def once_broken(query: str, results: Sequence[SearchResult]) -> list[float]:
        if fails and results[0].url.startswith("file:"):
            raise fails.pop()
        return [r.score or 0.0 for r in results]  # the provider's, as in test_query

    monkeypatch.setattr(relevance, "score_results", once_broken)
    run, _ = searcher(Provider([]), library=library)
    first = await run.run("q")
    assert [f.result.url for f in first.findings] == ["file:///docs/b.txt"], "kept unscored"
    again = await run.run("q")
    assert again.findings == [] and again.dropped == 1, "scored this time: below the bar"
    assert library.queries == ["q"], "the library itself asked once"
