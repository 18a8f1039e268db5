"""The fetch and netguard tests' page server (no name, nothing allowed) and DNS table; the
open-access tests' page server serving a paper's PDF."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.documents import write_pdf
from tests.support.fakes.page_server import PageServer
from tests.support.fetching import Resolver, dns_table
from tests.support.open_access import PAGES
from tests.support.search import PAGES_HOST


@pytest.fixture
def bare_pages() -> Iterator[PageServer]:
    """The page server as it is: no host name mapped to it and none allowed by the environment."""
    with PageServer() as server:
        yield server


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Resolver:
    return dns_table(monkeypatch)


@pytest.fixture
def paper_pages(bare_pages: PageServer, resolver: Resolver, tmp_path: Path) -> PageServer:
    """The page server as `pages.test`, serving the paper at /pdf/paper.pdf."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    bare_pages.pdfs["paper.pdf"] = write_pdf(tmp_path / "paper.pdf", PAGES).read_bytes()
    return bare_pages
