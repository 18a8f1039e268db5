"""`cli.advice`: a report without a retrieved source names its real cause, one per cause."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.cli.advice import unsourced
from deep_research.config.settings import load_context


def event(name: str, **fields: Any) -> dict[str, Any]:
    return {"t": 1.0, "kind": "progress", "event": name, **fields}


STARTED = event("research_started", id="r1", topic="heat pumps")


def sent(*queries: str) -> list[dict[str, Any]]:
    return [event("search", id="r1", query=q, sent=1, share=6, cap=6) for q in queries]


def done(*queries: str) -> list[dict[str, Any]]:
    return [event("search_done", id="r1", query=q, urls=[], dropped=3, usd=0.0) for q in queries]


def advice(records: list[dict[str, Any]], status: str = "no_sources", **settings: Any) -> str:
    values = {"status": status, "sources": [], **settings.pop("values", {})}
    return unsourced(status, values, load_context(settings), records)


SEARCH_PROVIDER = "another search provider (--search)"


def test_no_research_call_blames_the_model_not_the_search() -> None:
    text = advice([event("model_call", role="orchestrator", model="m", usd=0.0)])
    assert text.startswith(": it cites no source. The model made no research call")
    assert "deep-research doctor" in text and "--search)" not in text


def test_researchers_that_sent_no_usable_search_blame_the_model() -> None:
    text = advice([STARTED])
    assert "The researchers sent no usable search" in text and "placeholder" in text
    assert "--search)" not in text


def test_the_cost_budget_is_named_when_it_stopped_the_research() -> None:
    text = advice([STARTED], max_cost_usd=0.05, values={"budget_note": "The run stopped."})
    assert "The cost budget (--max-cost 0.05: $0.0500) stopped the research" in text
    assert "--max-cost 0.1" in text and "--search" not in text


def test_searches_that_found_nothing_suggest_the_search() -> None:
    text = advice([STARTED, *sent("a", "b"), *done("a", "b")], max_searches_per_run=6)
    assert "The 2 searches sent found nothing worth keeping" in text
    assert SEARCH_PROVIDER in text and "--max-searches" not in text, "the cap was not reached"
    spent = advice([STARTED, *sent("a", "b"), *done("a", "b")], max_searches_per_run=2)
    assert "more searches (--max-searches 4)" in spent


def test_an_empty_library_is_named() -> None:
    text = advice([STARTED, *sent("a"), *done("a")], search_provider="library")
    assert "Your library gave nothing for 1 search" in text and "library add" in text
    assert "--search)" not in text


def test_every_search_failing_is_named() -> None:
    failed = event("search_failed", id="r1", query="a", error="HTTP 500")
    text = advice([STARTED, *sent("a"), failed])
    assert "Every search failed (1 search)" in text and "replay" in text


@pytest.mark.parametrize(
    ("records", "settings", "says"),
    [
        ([STARTED], {"max_searches_per_run": 0}, "The search cap allowed no search"),
        (
            [STARTED, event("search_refused", id="r1", query="a", cap=3)],
            {"max_searches_per_run": 3},
            "The search cap was reached before a search was sent (1 refused)",
        ),
    ],
)
def test_the_search_cap_is_named_when_it_allowed_nothing(
    records: list[dict[str, Any]], settings: dict[str, Any], says: str
) -> None:
    assert says in advice(records, **settings)


def test_pages_read_but_not_cited_blame_the_report_not_the_search() -> None:
    page = {"url": "https://a.example/p", "title": "P", "content": "text", "found_by": "t"}
    text = advice([STARTED, *sent("a")], status="unverified", values={"sources": [page]})
    assert text.startswith(": every citation in it was removed")
    assert "The research read 1 page, but the report cites none of them" in text
    assert "--search" not in text


def test_memory_that_answered_without_a_citation_is_named() -> None:
    remembered = event("search_remembered", id="r1", query="a", urls=[])
    text = advice([STARTED, remembered])
    assert "Memory answered 1 query" in text and "use_memory=false" in text


def test_researchers_that_failed_before_searching_are_named_not_the_model() -> None:
    failed = event("research_failed", id="r1", topic="heat pumps", error="HTTP 500")
    text = advice([STARTED, failed])
    assert "1 researcher failed before searching" in text and "replay" in text
    assert "no usable search" not in text
