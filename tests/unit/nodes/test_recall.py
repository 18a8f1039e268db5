"""nodes/recall.py: the pages earlier reports cited come back as sources, a web PDF's page
still a page of its own."""

from __future__ import annotations

from typing import Any, cast

import pytest

from deep_research.citations.registry import SourceRegistry
from deep_research.config.settings import Context
from deep_research.memory import Store
from deep_research.memory import pages as memory_pages
from deep_research.memory.earlier import EarlierReport
from deep_research.memory.research import RememberedPage
from deep_research.nodes import recall

PDF = "https://a.example/r.pdf"


async def test_cited_pdf_pages_come_back_as_pdf_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = [
        RememberedPage(f"{PDF}#page=4", "R, page 4", "Page four.", "2026-11-30", 0.0, 4),
        RememberedPage("https://a.example/p", "P", "A page.", "2026-11-30", 0.0),
        # Stored without the fact that it was a PDF's page: the page itself.
        RememberedPage("https://a.example/q.html#page=2", "Q", "Q.", "2026-11-30", 0.0),
    ]

    async def cited_pages(store: Store, urls: list[str], **_: Any) -> list[RememberedPage]:
        return [page for page in stored if page.url in urls]

    monkeypatch.setattr(memory_pages, "cited_pages", cited_pages)
    earlier = EarlierReport("t", "Q?", "2026-11-30", 0.9, "", 0.9, tuple(p.url for p in stored))
    sources = await recall._cited(cast(Store, object()), [earlier], Context())
    assert [s.get("pdf_page") for s in sources] == [4, None, None]
    registry = SourceRegistry(sources)
    assert [entry.url for entry in registry] == [
        f"{PDF}#page=4",
        "https://a.example/p",
        "https://a.example/q.html",
    ]
    assert registry.lookup(PDF) is registry.lookup(f"{PDF}#page=4") is not None


@pytest.mark.slow  # real Chroma and MiniLM
async def test_a_store_holding_no_report_is_not_opened_before_the_first_model_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A first run that failed after opening its store early leaves a catalogue and no
    report: the next run's `recall` must treat it as nothing remembered, not open it."""
    from langchain_core.messages import HumanMessage

    from deep_research.memory import LIBRARY_COLLECTION, Location, Piece, open_store, preparing
    from deep_research.memory import open as memory_open

    where = tmp_path / "memory"
    store = await open_store(Location(path=where))
    await store.put(LIBRARY_COLLECTION, "a", [Piece("a document", {"title": "A"})])
    monkeypatch.setenv("MEMORY_DIR", str(where))
    opened: list[object] = []
    early: list[bool] = []

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        opened.append(args)
        raise AssertionError("recall opened a store that remembers nothing")

    monkeypatch.setattr(memory_open, "open_store", recorded)
    monkeypatch.setattr(preparing, "open_early", lambda location: early.append(True))
    runtime = cast(Any, type("R", (), {"context": Context(use_memory=True)})())
    state = cast(Any, {"messages": [HumanMessage("Heat pumps?")]})
    update = await recall.recall(state, runtime)
    assert update["earlier_reports"] == [] and opened == [] and early == [True]
