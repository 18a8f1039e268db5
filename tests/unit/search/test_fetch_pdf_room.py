"""A PDF's bytes past a page's cap come from one room for the process, held from its
download until its text is extracted, even when its fetch ends first: real fetches from
the local page server, the extraction held on an event where a test needs it to be slow."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.search import pdf_room
from deep_research.search.fetch import EXTRACTION_THREADS, Page
from deep_research.text import extract
from tests.support.documents import write_pdf
from tests.support.fakes.page_server import PageServer
from tests.support.fetching import Resolver, fetch, named
from tests.support.search import PAGES_HOST

PAGES = ["Cover of the annual review.", "Wind output in Norway rose 40 percent.", "Tables."]
CAPS = {"max_bytes": 50_000, "max_pdf_bytes": 1_000_000}


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> pdf_room.Room:
    room = pdf_room.Room(400_000)
    monkeypatch.setattr(pdf_room, "_room", room)
    return room


@pytest.fixture
def paper(bare_pages: PageServer, resolver: Resolver, tmp_path: Path) -> str:
    """A paper of about 300 KB at the URL returned (`?chunked=1`: its length unstated)."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    bare_pages.pdfs["paper.pdf"] = write_pdf(tmp_path / "p.pdf", PAGES, figure=300_000).read_bytes()
    return named(bare_pages, "/pdf/paper.pdf")


def reserved(bare_pages: PageServer) -> int:
    """What the paper, its length stated, takes of the room: one byte past it, less a page."""
    return len(bare_pages.pdfs["paper.pdf"]) + 1 - CAPS["max_bytes"]


@pytest.fixture
def slow_extraction(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Extraction waits for the event (set at the end whatever happens)."""
    done = threading.Event()
    read_body = extract.read_body

    def waiting(*args: object) -> extract.Read:
        done.wait(10)
        return read_body(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(extract, "read_body", waiting)
    yield done
    done.set()


async def _until(condition: object, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        await asyncio.sleep(0.02)


async def test_pdfs_past_a_page_s_cap_share_the_process_s_room(
    paper: str, shared: pdf_room.Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held from the download to the extraction; with too little left, a PDF is skipped
    saying why; the room is whole again once the reads are done; a page never takes any."""
    left_while_read: list[int] = []
    read_body = extract.read_body

    def reading(*args: object) -> extract.Read:
        left_while_read.append(shared.left)
        return read_body(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(extract, "read_body", reading)
    whole = await fetch(f"{paper}?chunked=1", **CAPS)  # its length unknown: all it may take
    assert isinstance(whole, Page) and whole.pdf_pages == tuple(PAGES)  # the room sufficed
    assert left_while_read == [0] and shared.left == 400_000  # held until extracted
    why = (
        "a PDF over 60,000 bytes is not read now: other PDFs being read hold the room for "
        "more (cut short, none of it can be)"
    )
    with shared.taken(390_000):  # other reads hold nearly all of it
        stated = await fetch(paper, **CAPS)
        chunked = await fetch(f"{paper}?chunked=1", **CAPS)
        assert shared.left == 10_000
    assert isinstance(stated, Page) and stated.skipped == why and stated.raw_bytes == 0
    assert isinstance(chunked, Page) and chunked.skipped == why and not chunked.pdf_pages
    assert shared.left == 400_000
    with shared.taken(400_000):
        page = await fetch(paper.replace("/pdf/paper.pdf", "/article/heat-pumps"), **CAPS)
    assert isinstance(page, Page) and not page.skipped


async def test_a_fetch_out_of_time_gives_the_room_back_only_when_its_extraction_ends(
    paper: str, bare_pages: PageServer, shared: pdf_room.Room, slow_extraction: threading.Event
) -> None:
    """The deadline ends the fetch, not the thread reading its bytes: the room stays taken
    until that thread lets them go."""
    page = await fetch(paper, timeout=0.5, **CAPS)
    assert isinstance(page, Page) and page.skipped == "timed out after 0.5 s"
    assert shared.left == 400_000 - reserved(bare_pages)  # the thread still reads the PDF
    slow_extraction.set()
    await _until(lambda: shared.left == 400_000)
    assert shared.left == 400_000


async def test_a_fetch_out_of_time_while_its_extraction_waits_lets_its_bytes_go_at_once(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path, slow_extraction: threading.Event
) -> None:
    """With every extraction thread busy, a PDF whose fetch ends while it waits is never
    extracted: its room comes back at once, and its job holds none of its bytes."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    room = pdf_room.Room(10_000_000)
    busy = [write_pdf(tmp_path / f"{n}.pdf", PAGES, figure=100_000 + n) for n in range(5)]
    for n, file in enumerate(busy):
        bare_pages.pdfs[f"{n}.pdf"] = file.read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pdf_room, "_room", room)
        urls = [named(bare_pages, f"/pdf/{n}.pdf") for n in range(EXTRACTION_THREADS + 1)]
        pages = await asyncio.gather(*(fetch(url, timeout=0.5, **CAPS) for url in urls))
        assert all(isinstance(p, Page) and p.skipped.startswith("timed out") for p in pages)
        held = [len(file.read_bytes()) + 1 - 50_000 for file in busy]
        # The four under way still hold theirs; the one that waited gave its back.
        assert room.size - room.left in {sum(held) - one for one in held}
        slow_extraction.set()
        await _until(lambda: room.left == room.size)
        assert room.left == room.size
