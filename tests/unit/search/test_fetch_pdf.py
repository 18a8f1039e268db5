"""A PDF found on the web, fetched for real from a local server: read page by page, once,
within the web's PDF bounds however hostile the file."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from deep_research.search import fetch as fetch_module
from deep_research.search import pdf_room
from deep_research.search.fetch import Page
from deep_research.text import extract
from deep_research.text.pdf import PdfBounds
from tests.support.documents import write_pdf, write_shared_content_pdf
from tests.support.fakes.page_server import PageServer
from tests.support.fetching import Resolver, fetch, named
from tests.support.search import PAGES_HOST

PAGES = ["Cover of the annual review.", "Wind output in Norway rose 40 percent.", "Tables."]


async def test_a_pdf_is_read_page_by_page(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    bare_pages.pdfs["paper.pdf"] = write_pdf(tmp_path / "p.pdf", PAGES).read_bytes()
    page = await fetch(named(bare_pages, "/pdf/paper.pdf"), max_chars=25)
    assert isinstance(page, Page) and not page.skipped
    assert page.pdf_pages == ("Cover of the annual …", "Wind output in Norway …", "Tables.")
    assert page.text.startswith("Cover of the annual") and len(page.text) <= 25


async def test_hostile_pdfs_stay_within_the_web_bounds(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    # 2,000 pages drawing one 70 MB stream, in ~150 KB: refused at the first page.
    drawn = write_shared_content_pdf(tmp_path / "d.pdf", pages=2_000)
    bare_pages.pdfs["drawn.pdf"] = drawn.read_bytes()
    page = await fetch(named(bare_pages, "/pdf/drawn.pdf"))
    assert isinstance(page, Page) and page.skipped == "PDF pages draw over 20 MB of content"
    # 1,500 pages in 250 KB: read up to the web's page bound, the rest never parsed.
    bare_pages.pdfs["long.pdf"] = write_shared_content_pdf(
        tmp_path / "l.pdf", pages=1_500, drawn=10
    ).read_bytes()
    page = await fetch(named(bare_pages, "/pdf/long.pdf"))
    assert isinstance(page, Page) and len(page.pdf_pages) == extract.WEB_PDF.pages == 1_000
    # Many pages: read up to the page bound (here 3), the rest never parsed.
    monkeypatch.setattr(extract, "WEB_PDF", PdfBounds(pages=3, chars=10_000, content=10**8))
    many = write_pdf(tmp_path / "m.pdf", [f"Page {n} text." for n in range(1, 60)])
    bare_pages.pdfs["many.pdf"] = many.read_bytes()
    page = await fetch(named(bare_pages, "/pdf/many.pdf"))
    assert isinstance(page, Page) and page.pdf_pages == (
        "Page 1 text.",
        "Page 2 text.",
        "Page 3 text.",
    )
    # One huge page: its text is cut to the characters a page may keep.
    huge = write_pdf(tmp_path / "h.pdf", ["word " * 5_000])
    bare_pages.pdfs["huge.pdf"] = huge.read_bytes()
    page = await fetch(named(bare_pages, "/pdf/huge.pdf"), max_chars=1_000)
    assert isinstance(page, Page) and len(page.pdf_pages) == 1 and len(page.pdf_pages[0]) <= 1_000


async def test_a_pdf_read_only_in_part_says_so_to_the_researcher(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped at the page bound: each page shown says which pages of how many were read."""
    from deep_research.search.pdf_pages import by_page
    from deep_research.search.query import Finding
    from deep_research.search.render import _render_finding
    from deep_research.search.types import SearchResult

    resolver({PAGES_HOST: ["127.0.0.1"]})
    monkeypatch.setattr(extract, "WEB_PDF", PdfBounds(pages=3, chars=10_000, content=10**8))
    texts = [f"Page {n} on tides." for n in range(1, 40)] + ["Wind output in Norway."]
    bare_pages.pdfs["long.pdf"] = write_pdf(tmp_path / "l.pdf", texts).read_bytes()
    url = named(bare_pages, "/pdf/long.pdf")
    page = await fetch(url)
    assert isinstance(page, Page) and len(page.pdf_pages) == 3 and page.pdf_total == 40
    cut = "the PDF was read only in part: pages 1–3 of 40 (cut after page 3, the page limit)"
    assert page.note == cut
    paged = by_page([Finding(SearchResult(url, "Long", "s"), 0.8, page)], "tides")
    assert [f.result.pdf_page for f in paged] == [1, 2, 3]
    shown = _render_finding(1, paged[1], 2_000, set())
    assert f"page text (page 2 of 40 of a PDF; {cut}):" in shown
    # Read whole, a PDF's page says nothing of the kind.
    bare_pages.pdfs["short.pdf"] = write_pdf(tmp_path / "s.pdf", texts[:3]).read_bytes()
    whole = await fetch(named(bare_pages, "/pdf/short.pdf"))
    assert isinstance(whole, Page) and whole.note == "" and whole.pdf_total == 3


async def test_a_paper_of_megabytes_is_read_whole(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path
) -> None:
    """A PDF past a page's 2 MB cap (a paper's figures) is read: cut there, as it once was,
    pypdf read none of it ("text extraction failed (PdfStreamError)")."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    paper = write_pdf(tmp_path / "p.pdf", PAGES, figure=3_000_000).read_bytes()
    assert len(paper) > fetch_module.MAX_PAGE_BYTES
    bare_pages.pdfs["paper.pdf"] = paper
    for path in ("/pdf/paper.pdf", "/pdf/paper.pdf?chunked=1"):
        page = await fetch(named(bare_pages, path))
        assert isinstance(page, Page) and not page.skipped, path
        assert page.pdf_pages == tuple(PAGES) and page.raw_bytes == len(paper)
        assert page.note == ""


async def test_a_pdf_over_its_cap_is_skipped_saying_why(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path
) -> None:
    """Stated too long, it is not downloaded; sent in chunks, reading stops at the cap. A
    PDF cut short cannot be read, so either way it is skipped with the cap, never the
    parser's error, and never read in part."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    bare_pages.pdfs["paper.pdf"] = write_pdf(tmp_path / "p.pdf", PAGES, figure=300_000).read_bytes()
    why = "a PDF over 100,000 bytes is not read (cut short, none of it can be)"
    caps = {"max_bytes": 50_000, "max_pdf_bytes": 100_000}
    stated = await fetch(named(bare_pages, "/pdf/paper.pdf"), **caps)
    assert isinstance(stated, Page) and stated.skipped == why and stated.raw_bytes == 0
    chunked = await fetch(named(bare_pages, "/pdf/paper.pdf?chunked=1"), **caps)
    assert isinstance(chunked, Page) and chunked.skipped == why
    assert chunked.raw_bytes == 100_001 and not chunked.pdf_pages  # one byte past: cut
    assert pdf_room.room().left == pdf_room.ROOM  # all given back


async def test_a_compressed_paper_is_read_whole_whatever_its_stated_length(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path
) -> None:
    """Sent gzip-encoded, its Content-Length is the compressed size (3 KB for a 3 MB PDF):
    read to that, it was cut, and skipped as too big."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    paper = write_pdf(tmp_path / "p.pdf", PAGES, figure=3_000_000, noise=False).read_bytes()
    bare_pages.pdfs["paper.pdf"] = paper
    page = await fetch(named(bare_pages, "/pdf/paper.pdf?gzip=1"))
    assert isinstance(page, Page) and not page.skipped and page.pdf_pages == tuple(PAGES)
    assert page.raw_bytes == len(paper) and pdf_room.room().left == pdf_room.ROOM


@pytest.mark.parametrize(
    ("header", "length"),
    [
        ("123", 123),
        ("0", 0),
        ("9" * 20, 10**20 - 1),  # h11's longest: over any cap, refused unread
        ("", -1),
        ("12a", -1),
        ("-5", -1),
        ("1" * 30, -1),
        ("١٢", -1),
    ],
)
def test_a_stated_length_is_read_only_when_it_is_a_plain_number(header: str, length: int) -> None:
    # As a server's bytes: a header is not always ASCII.
    headers = httpx.Headers([(b"content-length", header.encode())] if header else [])
    assert pdf_room.stated_length(headers) == length
