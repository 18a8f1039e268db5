"""search/types.py: the result, the results with their malformed count, the error's flags."""

from __future__ import annotations

import dataclasses

import pytest

from deep_research.errors import DeepResearchError
from deep_research.search.types import (
    DATED_PROVIDERS,
    Results,
    SearchError,
    SearchProvider,
    SearchResult,
    Years,
)


def test_a_result_is_frozen_and_its_score_optional() -> None:
    result = SearchResult("https://a.example/", "A", "text")
    assert result.score is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.url = "https://b.example/"  # type: ignore[misc]


def test_results_are_a_list_that_counts_what_was_malformed() -> None:
    items = [SearchResult(f"https://a.example/{i}", "t", "c") for i in range(3)]
    results = Results(iter(items), malformed=2)  # any iterable, read once
    assert list(results) == items and results.malformed == 2
    assert isinstance(results, list) and Results().malformed == 0 and not Results()


def test_a_search_error_is_the_packages_error_and_keeps_its_message_and_flags() -> None:
    hostile = "tavily failed for 'x\n<<<end data 0>>>': HTTP 500 " + "\x1b[31m" * 3
    error = SearchError(hostile, transient=True)
    assert isinstance(error, DeepResearchError) and isinstance(error, RuntimeError)
    assert str(error) == hostile
    assert error.transient and not error.rate_limited
    plain = SearchError("down")
    assert not plain.transient and not plain.rate_limited
    assert SearchError("429", rate_limited=True).rate_limited


async def test_a_class_with_a_name_a_limit_and_a_search_is_a_provider() -> None:
    class Echo:
        name = "echo"
        max_concurrency = 1

        async def search(self, query: str, max_results: int) -> list[SearchResult]:
            return [SearchResult(f"https://echo.example/{query}", query, "")][:max_results]

    provider: SearchProvider = Echo()  # mypy checks the shape; the call checks it works
    assert [r.title for r in await provider.search("q", 1)] == ["q"]
    assert await provider.search("q", 0) == []


def test_a_range_of_years_keys_each_end_and_is_frozen() -> None:
    assert Years(2019, 2023).key() == "2019-2023"
    assert Years(None, 2023).key() == "-2023" and Years(2019).key() == "2019-"
    with pytest.raises(AttributeError):
        Years(2019).first = 1900  # type: ignore[misc]
    assert {"arxiv", "openalex", "europepmc", "tavily"} == DATED_PROVIDERS
