"""`memory.pages`: stored pages read back, those answering a query and those a recalled
report cited (a real embedded Chroma with real MiniLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.memory import Location, Store, open_store, pages
from deep_research.memory.earlier import similar_reports
from deep_research.memory.pages import cited_pages, remembered_pages
from deep_research.memory.research import (
    DAY,
    PAGES,
    PASSAGES_COLLECTION,
    REPORTS_COLLECTION,
    CitedPage,
    pages_of,
    remember,
)

NOW = 1_800_000_000.0
HEAT_PUMPS = "Are heat pumps worth it in Norway?"
PAGE = CitedPage(
    "https://example.org/heat-pumps",
    "Heat pumps in cold climates",
    ["Air-source heat pumps in Norway keep most of their output at minus fifteen degrees."],
)
HARBOUR = CitedPage(
    "https://example.org/harbour-notice",
    "Harbour notice",
    ["Commercial cockle landings reached 640 tonnes in 2021.", "The harbour closes at dusk."],
)


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await open_store(Location(path=tmp_path / "memory"))


async def test_passages_answer_within_max_age_and_keep_their_first_date(store: Store) -> None:
    await remember(
        store, thread_id="t1", question=HEAT_PUMPS, report="# R", cited=[PAGE], now=NOW - 10 * DAY
    )
    query = "heat pump output in Norway at minus fifteen degrees"
    (page,) = await remembered_pages(
        store, query, min_similarity=0.5, max_age_days=30, limit=5, now=NOW
    )
    assert page.url == PAGE.url and page.retrieved == "2027-01-05"
    assert "minus fifteen" in page.text and page.similarity >= 0.5
    too_old = await remembered_pages(
        store, query, min_similarity=0.5, max_age_days=5, limit=5, now=NOW
    )
    assert too_old == []
    # Cited again today from memory: not stored again (memory gave back only the passages
    # that answered, never to replace the whole page), so it keeps its first date.
    again = CitedPage(PAGE.url, PAGE.title, ["minus fifteen"], retrieved="2027-01-05")
    await remember(store, thread_id="t2", question=HEAT_PUMPS, report="# R", cited=[again], now=NOW)
    (stored,) = await store.items(PASSAGES_COLLECTION)
    assert stored.metadata["retrieved"] == "2027-01-05" and stored.text == PAGE.texts[0]
    assert stored.metadata["thread"] == "t1"
    # Read again from the web in a later run: its newer copy replaces the old one.
    await remember(store, thread_id="t3", question="Q", report="# R", cited=[PAGE], now=NOW)
    (stored,) = await store.items(PASSAGES_COLLECTION)
    assert stored.metadata["retrieved"] == "2027-01-15" and stored.metadata["thread"] == "t3"


async def test_a_recalled_report_gives_back_every_page_it_cited_whole_and_dated(
    store: Store,
) -> None:
    report = "# Heat pumps\n\nThey work [a](https://example.org/heat-pumps)."
    library = CitedPage("file:///home/u/notes.md", "notes", ["mine"])
    cited = [PAGE, HARBOUR, library]
    await remember(
        store, thread_id="t1", question=HEAT_PUMPS, report=report, cited=cited, now=NOW - DAY
    )
    (earlier,) = await similar_reports(store, HEAT_PUMPS, min_similarity=0.5, now=NOW)
    assert earlier.pages == (PAGE.url, HARBOUR.url), "web pages only, in citation order"
    pages = await cited_pages(store, list(earlier.pages), max_age_days=30, now=NOW)
    assert [p.url for p in pages] == [PAGE.url, HARBOUR.url]
    harbour = pages[1]
    assert harbour.text == "\n\n".join(HARBOUR.texts) and harbour.retrieved == "2027-01-14"
    assert await cited_pages(store, list(earlier.pages), max_age_days=0.5, now=NOW) == []


async def test_a_damaged_pages_entry_gives_no_page(store: Store) -> None:
    for value in ("not json", json.dumps({"a": 1}), json.dumps(["file:///etc/passwd", 3])):
        assert pages_of({PAGES: value}) == []
    assert pages_of({}) == [], "a report stored before the field: none"
    await remember(store, thread_id="t1", question=HEAT_PUMPS, report="# R", cited=[], now=NOW)
    (stored, *_) = await store.items(REPORTS_COLLECTION)
    assert json.loads(str(stored.metadata[PAGES])) == []
    assert await cited_pages(store, ["https://example.org/never"], max_age_days=30) == []
    assert not await store.items(PASSAGES_COLLECTION)


async def test_a_store_stuffed_under_one_page_gives_back_a_bounded_page(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared or damaged store is outside input: a page of a thousand chunks (or a huge
    title) comes back cut, not whole."""
    monkeypatch.setattr(pages, "MAX_CHUNKS_PER_PAGE", 5)
    monkeypatch.setattr(pages, "MAX_CITED_PAGE_CHARS", 2_000)
    huge = CitedPage(PAGE.url, "T" * 5_000, [f"Passage {n}. " + "word " * 100 for n in range(40)])
    await remember(store, thread_id="t1", question=HEAT_PUMPS, report="# R", cited=[huge], now=NOW)
    assert len(await store.items(PASSAGES_COLLECTION)) > 5, "the store holds more than allowed"
    (page,) = await cited_pages(store, [PAGE.url] * 3, max_age_days=30, now=NOW)
    assert len(page.text) <= 2_000 + 20 and len(page.title) <= pages.TITLE_CHARS + 20


async def test_only_a_page_stored_as_a_pdf_s_page_comes_back_as_one(store: Store) -> None:
    """The fact is stored beside the URL; a `#page=N` alone (an HTML page's, a shared or
    older store's) or a number that is not the URL's names the page itself."""
    from deep_research.memory.research import PDF_PAGE, stored_pdf_page

    pdf = CitedPage(
        "https://example.org/r.pdf#page=4", "R, page 4", ["Heat pump output, page four."], "", 4
    )
    html = CitedPage(
        "https://example.org/p.html#page=2", "P", ["Heat pump output in an HTML page."]
    )
    await remember(
        store, thread_id="t", question=HEAT_PUMPS, report="# R", cited=[pdf, html], now=NOW
    )
    found = await remembered_pages(
        store, "heat pump output", min_similarity=0.0, max_age_days=30, limit=5, now=NOW
    )
    assert {page.url: page.pdf_page for page in found} == {pdf.url: 4, html.url: 0}
    cited = await cited_pages(store, [pdf.url, html.url], max_age_days=30, now=NOW)
    assert [page.pdf_page for page in cited] == [4, 0]
    assert stored_pdf_page(pdf.url, {PDF_PAGE: 5}) == 0, "not the URL's page"
    assert stored_pdf_page(pdf.url, {PDF_PAGE: True}) == 0
    assert stored_pdf_page(pdf.url, {PDF_PAGE: "4"}) == 0
