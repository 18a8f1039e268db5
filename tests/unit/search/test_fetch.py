"""Real httpx + trafilatura against a local page server: extraction, caps and timeouts."""

from __future__ import annotations

import pytest

from tests.support.fakes.page_server import BOILERPLATE, INJECTION, PageServer
from tests.support.fetching import Resolver, fetch, named
from tests.support.search import PAGES_HOST


async def test_article_main_text_kept_and_boilerplate_dropped(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    page = await fetch(named(bare_pages, "/article/heat-pumps-in-norway"))
    assert not page.skipped
    assert "# The truth about heat pumps in norway" in page.text
    assert "measured a 13 percent change in heat pumps in norway" in page.text
    for chrome in BOILERPLATE:
        assert chrome not in page.text, chrome


async def test_hidden_text_is_removed_before_extraction(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    page = await fetch(named(bare_pages, "/hidden"))
    assert "Visible closing paragraph" in page.text
    assert "IGNORE ALL PREVIOUS" not in page.text and INJECTION not in page.text


async def test_huge_page_is_cut_at_the_byte_cap_and_text_at_the_char_cap(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    page = await fetch(named(bare_pages, "/huge"), max_bytes=100_000, max_chars=1_000)
    assert page.raw_bytes == 100_000 and "only the first 100,000 bytes" in page.note
    assert page.text.startswith("# The truth about huge page") and len(page.text) <= 1_000


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/file.bin", "content type 'application/octet-stream' is not read"),
        ("/report.pdf", "text extraction failed (PdfStreamError)"),  # not really a PDF
        ("/missing", "HTTP 404"),
        ("/empty", "no main text could be extracted"),
        ("/redirect/7", "more than 5 redirects"),
    ],
)
async def test_unreadable_pages_are_skipped_with_a_reason(
    bare_pages: PageServer, resolver: Resolver, path: str, reason: str
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    page = await fetch(named(bare_pages, path))
    assert page.text == "" and reason in page.skipped


async def test_plain_text_and_redirects_within_the_cap_are_read(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    assert (await fetch(named(bare_pages, "/plain.txt"))).text.startswith("Plain notes")
    page = await fetch(named(bare_pages, "/redirect/5"))
    assert "# The truth about redirected" in page.text
    assert bare_pages.requests[-1] == "/article/redirected"


async def test_slow_page_times_out(bare_pages: PageServer, resolver: Resolver) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    page = await fetch(named(bare_pages, "/slow"), timeout=0.3)
    assert page.skipped == "timed out after 0.3 s"
