"""search/query.py: a search scored as it answers, inside its durable call, and the step
taking those scores; a step run again after a stop scoring what it reads back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from deep_research.embedding.files import WeightsUnavailable
from deep_research.search import relevance
from deep_research.search.query import Pending
from deep_research.search.types import SearchResult
from tests.unit.search.test_query import RESULTS, Provider, searcher


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
    async def missing(query: str, results: Sequence[SearchResult]) -> list[float]:
        raise WeightsUnavailable("no weights here, and no download")

    monkeypatch.setattr(relevance, "score_results", missing)
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
