"""nodes/recall.py: the pages earlier reports cited come back as sources, a web PDF's page
still a page of its own."""

from __future__ import annotations

from typing import Any, cast

import pytest

from deep_research.citations.registry import SourceRegistry
from deep_research.config.settings import Context
from deep_research.memory import Store
from deep_research.memory import pages as memory_pages
from deep_research.memory.research import EarlierReport, RememberedPage
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
