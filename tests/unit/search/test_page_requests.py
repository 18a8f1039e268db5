"""search/page_requests.py: what a rendered page's requests meet: the address guard on every
one (redirects followed hop by hop), only GETs of documents, scripts and data, a bounded
number."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from deep_research.search.fetch import Page
from deep_research.search.page_requests import MAX_REQUESTS
from tests.support.fakes.page_server import PageServer
from tests.support.fetching import Resolver, fetch, named, renderer
from tests.support.search import PAGES_HOST


@pytest.mark.slow
async def test_what_a_page_s_script_reaches_for_goes_through_the_address_guard(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    with PageServer() as other:  # the same machine on another port, by address: not allowed
        secret = f"http://127.0.0.1:{other.port}/article/secret"
        # An allowed address that redirects there: Chromium follows, through the route again.
        bounced = named(bare_pages, f"/redirect-to?target={quote(secret, safe='')}")
        for target in (secret, "http://169.254.169.254/", bounced):
            url = named(bare_pages, f"/reaching?target={quote(target, safe='')}")
            page = await fetch(url, renderer=renderer())
            assert isinstance(page, Page) and "Scripted report on reaching page" in page.text
            assert "2 of its" in page.note, "its fetch and its script refused, counted"
        assert other.requests == [], "the page's script reached a private address"
        assert bare_pages.requests.count(bounced.split(str(bare_pages.port), 1)[1]) == 2


@pytest.mark.slow
async def test_a_render_sends_only_gets_of_documents_scripts_and_data_and_a_bounded_number(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    page = await fetch(named(bare_pages, "/flooding"), renderer=renderer())
    assert isinstance(page, Page) and "Scripted paragraph 1 on flooding page" in page.text
    sent = bare_pages.requests
    assert "/data/posted" not in sent and "/data/image" not in sent and "/data/font" not in sent
    flood = [path for path in sent if path.startswith("/data/flood-")]
    assert 0 < len(flood) <= MAX_REQUESTS, len(flood)
