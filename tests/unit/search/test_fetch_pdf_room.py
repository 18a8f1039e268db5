"""A PDF's bytes past a page's cap come from one room for the process, held from its
download until its text is extracted, even when its fetch ends first: real fetches from
the local page server, the extraction held on an event where a test needs it to be slow."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from deep_research.search import fetch as fetch_module
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


def reserved(size: int) -> int:
    """What a PDF of `size` bytes, its length stated, takes of the room: past a page's cap."""
    return size - CAPS["max_bytes"]


class SlowExtraction:
    """Extraction on threads of the test's own, each waiting for `done` (set at the end
    whatever happens); `started` counts the extractions under way, `boxes` what each job
    was handed (`fetch._read_boxed`'s box)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.started = 0
        self.boxes: list[tuple[list[bytes], str]] = []  # each job's box, and its URL
        self.pool = ThreadPoolExecutor(EXTRACTION_THREADS, thread_name_prefix="test-extract")


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowExtraction]:
    slow = SlowExtraction()
    read_body, submit = extract.read_body, slow.pool.submit

    def waiting(*args: object) -> extract.Read:
        slow.started += 1
        slow.done.wait(10)
        return read_body(*args)  # type: ignore[arg-type]

    def submitting(work: object, box: list[bytes], kind: str, charset: str, url: str) -> object:
        slow.boxes.append((box, url))
        return submit(work, box, kind, charset, url)  # type: ignore[arg-type]

    monkeypatch.setattr(extract, "read_body", waiting)
    monkeypatch.setattr(slow.pool, "submit", submitting)
    monkeypatch.setattr(fetch_module, "_extractors", lambda: slow.pool)
    yield slow
    slow.done.set()
    slow.pool.shutdown(wait=True)


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
    whole = await fetch(f"{paper}?chunked=1", **CAPS)  # its length unknown: taken as it grows
    assert isinstance(whole, Page) and whole.pdf_pages == tuple(PAGES)  # the room sufficed
    # One step past a page's cap held it: held until extracted.
    assert whole.raw_bytes - CAPS["max_bytes"] < pdf_room.STEP
    assert left_while_read == [400_000 - pdf_room.STEP] and shared.left == 400_000
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
        page = await fetch(paper.replace("/pdf/paper.pdf", "/huge"), **CAPS)  # megabytes
    # Read to its own cap, cut there with a note, whatever the room holds.
    assert isinstance(page, Page) and not page.skipped and page.raw_bytes == 50_000
    assert page.note == "only the first 50,000 bytes were read"


async def test_a_fetch_out_of_time_gives_the_room_back_only_when_its_extraction_ends(
    paper: str, bare_pages: PageServer, shared: pdf_room.Room, slow: SlowExtraction
) -> None:
    """The deadline ends the fetch, not the thread reading its bytes: the room stays taken
    until that thread lets them go."""
    page = await fetch(paper, timeout=3.0, **CAPS)  # a local 300 KB: extracting by then
    assert isinstance(page, Page) and page.skipped == "timed out after 3 s"
    assert slow.started == 1
    assert shared.left == 400_000 - reserved(len(bare_pages.pdfs["paper.pdf"]))
    slow.done.set()
    await _until(lambda: shared.left == 400_000)
    assert shared.left == 400_000


async def test_a_fetch_ended_while_its_extraction_waits_lets_its_bytes_go_at_once(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path, slow: SlowExtraction
) -> None:
    """With every extraction thread busy, a PDF whose fetch ends while it waits is never
    extracted: its room comes back at once, and its job holds none of its bytes."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    room = pdf_room.Room(10_000_000)
    sizes = []
    for n in range(EXTRACTION_THREADS + 1):
        body = write_pdf(tmp_path / f"{n}.pdf", PAGES, figure=100_000 + n).read_bytes()
        bare_pages.pdfs[f"{n}.pdf"] = body
        sizes.append(len(body))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pdf_room, "_room", room)
        urls = [named(bare_pages, f"/pdf/{n}.pdf") for n in range(EXTRACTION_THREADS + 1)]
        tasks = [asyncio.create_task(fetch(url, **CAPS)) for url in urls]
        await _until(lambda: slow.started == EXTRACTION_THREADS and len(slow.boxes) == 5)
        assert slow.started == EXTRACTION_THREADS and len(slow.boxes) == 5
        waited = [urls.index(url) for box, url in slow.boxes if box]  # not taken by a thread
        assert len(waited) == 1
        for task in tasks:  # what a deadline does
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert [len(box) for box, _ in slow.boxes] == [0] * 5  # its bytes let go too
        # The four under way still hold theirs; the one that waited gave its back at once.
        assert room.size - room.left == sum(map(reserved, sizes)) - reserved(sizes[waited[0]])
        slow.done.set()
        await _until(lambda: room.left == room.size)
        assert room.left == room.size


async def test_pdfs_of_no_stated_length_read_at_once_take_only_what_they_grow_to(
    bare_pages: PageServer, resolver: Resolver, tmp_path: Path, slow: SlowExtraction
) -> None:
    """Six chunked papers held at once (their extraction slow): each takes one step of the
    room past a page's cap, not all its cap allows, so all six are read whole where the
    room once held two of them."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    room = pdf_room.Room(6 * pdf_room.STEP)
    for n in range(6):
        body = write_pdf(tmp_path / f"{n}.pdf", PAGES, figure=200_000 + n).read_bytes()
        assert CAPS["max_bytes"] < len(body) < CAPS["max_bytes"] + pdf_room.STEP
        bare_pages.pdfs[f"{n}.pdf"] = body
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pdf_room, "_room", room)
        urls = [named(bare_pages, f"/pdf/{n}.pdf") + "?chunked=1" for n in range(6)]
        tasks = [asyncio.create_task(fetch(url, **CAPS)) for url in urls]
        await _until(lambda: len(slow.boxes) == 6)
        assert len(slow.boxes) == 6 and room.left == 0, "all six downloaded and held"
        slow.done.set()
        pages = await asyncio.gather(*tasks)
        assert [page.pdf_pages for page in pages] == [tuple(PAGES)] * 6  # type: ignore[union-attr]
        await _until(lambda: room.left == room.size)
        assert room.left == room.size
