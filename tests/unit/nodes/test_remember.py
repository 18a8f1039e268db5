"""`remember` called directly, with the store and its writer replaced."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from langgraph.runtime import Runtime

from deep_research import memory
from deep_research.config.settings import Context
from deep_research.memory import MemoryUnavailable, research
from deep_research.nodes import remember as node
from deep_research.state import Source

PAGE = "https://a.example/page"
REPORT = f"Heat pumps keep a COP of 2 [in cold weather]({PAGE})."
STATE: Any = {
    "final_report": REPORT,
    "status": "complete",  # `finalize` sets it with the report
    "question": "Do heat pumps work in the cold?",
    "sources": [Source(url=PAGE, title="A", content="Heat pumps keep a COP of 2.", found_by="q")],
}
ON = Runtime(context=Context(use_memory=True))


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(
        node.progress, "emit", lambda event, **f: seen.append({"event": event, **f})
    )
    monkeypatch.setattr(node, "get_config", lambda: {"configurable": {"thread_id": "t-1"}})
    return seen


@pytest.fixture
def stored(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    async def open_store() -> Any:
        return SimpleNamespace(where="here")

    async def write(store: Any, **fields: Any) -> int:
        calls.append(fields)
        return len(list(fields["cited"]))

    monkeypatch.setattr(memory, "open_store", open_store, raising=False)
    monkeypatch.setattr(research, "remember", write)
    return calls


async def test_the_report_its_question_thread_and_cited_pages_are_stored(
    events: list[dict[str, Any]], stored: list[dict[str, Any]]
) -> None:
    assert await node.remember(STATE, ON) == {}
    [call] = stored
    assert (call["thread_id"], call["question"], call["report"]) == (
        "t-1",
        STATE["question"],
        REPORT,
    )
    assert [page.url for page in call["cited"]] == [PAGE]
    assert call["search_provider"] == ON.context.search_provider  # what recall filters on
    assert events == [
        {"event": "memory_saving", "pages": 1},  # said first: the store may take seconds
        {"event": "memory_saved", "where": "here", "pages": 1},
    ]


async def test_memory_off_or_no_report_stores_nothing(
    events: list[dict[str, Any]], stored: list[dict[str, Any]]
) -> None:
    assert await node.remember(STATE, Runtime(context=Context(use_memory=False))) == {}
    blank: Any = {**STATE, "final_report": "  \n"}
    assert await node.remember(blank, ON) == {}
    assert stored == [] and events == []


@pytest.mark.parametrize("status", ["no_sources", "unverified"])
async def test_a_report_that_is_not_complete_is_not_remembered(
    status: str, events: list[dict[str, Any]], stored: list[dict[str, Any]]
) -> None:
    """Recall would offer it as research, and it would replace the sourced report on its
    question: it stays out, and the event says why."""
    assert await node.remember({**STATE, "status": status}, ON) == {}
    assert stored == [] and events == [{"event": "memory_skipped", "status": status}]


async def test_an_unusable_store_is_an_event_and_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch, events: list[dict[str, Any]]
) -> None:
    async def locked() -> Any:
        raise MemoryUnavailable("in use by another process")

    monkeypatch.setattr(memory, "open_store", locked, raising=False)
    assert await node.remember(STATE, ON) == {}
    assert events == [
        {"event": "memory_saving", "pages": 1},
        {"event": "memory", "status": "unavailable", "reason": "in use by another process"},
    ]


async def test_a_cited_pdf_page_is_stored_as_one_and_an_html_page_s_page_is_not(
    events: list[dict[str, Any]], stored: list[dict[str, Any]]
) -> None:
    pdf, html = "https://a.example/r.pdf#page=4", "https://a.example/p.html#page=2"
    sources = [
        Source(url=pdf, title="R", content="Heat pumps keep a COP of 2.", found_by="q", pdf_page=4),
        Source(url=html, title="P", content="Heat pumps work at minus 15.", found_by="q"),
    ]
    report = f"COP of 2 [r]({pdf}). Work at minus 15 [p]({html})."
    state: Any = {**STATE, "final_report": report, "sources": sources}
    assert await node.remember(state, ON) == {}
    [call] = stored
    assert [(page.url, page.pdf_page) for page in call["cited"]] == [
        (pdf, 4),
        ("https://a.example/p.html", 0),
    ]
