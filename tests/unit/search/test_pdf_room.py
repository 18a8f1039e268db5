"""search.pdf_room: one room of bytes for the process's PDFs past a page's cap."""

from __future__ import annotations

import threading
from contextlib import ExitStack

import httpx
import pytest

from deep_research.search.pdf_room import (
    LONGER_THAN_STATED,
    ROOM,
    STEP,
    Cap,
    Room,
    cap,
    room,
    too_big,
)


def test_a_taker_gets_what_is_left_at_most_and_gives_it_back() -> None:
    shared = Room(100)
    with shared.taken(70) as first:
        assert first == 70 and shared.left == 30
        with shared.taken(50) as second, shared.taken(-5) as none:
            assert (second, none, shared.left) == (30, 0, 0)
        assert shared.left == 30
    assert shared.left == 100


def test_the_room_comes_back_when_the_reader_fails() -> None:
    shared = Room(100)
    with pytest.raises(RuntimeError), shared.taken(60):
        raise RuntimeError("the read failed")
    assert shared.left == 100


def test_takers_on_many_threads_never_hold_more_than_the_room() -> None:
    shared = Room(1_000)
    held: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def take() -> None:
        start.wait()
        for _ in range(2_000):
            with shared.taken(300) as got:
                with lock:
                    held.append(got)
                    assert 0 <= shared.left <= 1_000

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shared.left == 1_000 and len(held) == 16_000 and max(held) == 300


def test_the_process_has_one_room_of_its_size() -> None:
    assert room() is room() and room().size == ROOM


def _cap(
    kind: str, headers: dict[str, str], shared: Room, page: int = 100, most: int = 1_000
) -> Cap:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("deep_research.search.pdf_room._room", shared)
        with ExitStack() as held:
            got = cap(kind, httpx.Headers(headers), held, page, most)
        assert shared.left == shared.size  # given back with `held`
    return got


@pytest.mark.parametrize(
    ("kind", "headers", "want"),
    [
        ("html", {"content-length": "5000"}, Cap(100)),  # a page: its cap, no room
        ("pdf", {"content-length": "1001"}, Cap(0, refused=too_big(1_000))),
        ("pdf", {"content-length": "1000"}, Cap(1_001, when_cut=LONGER_THAN_STATED)),
        ("pdf", {"content-length": "50"}, Cap(101, when_cut=LONGER_THAN_STATED)),
        ("pdf", {}, Cap(1_001, when_cut=too_big(1_000))),  # exactly 1,000: read whole
        # A compressed body's length is not what is read: as if none were stated.
        (
            "pdf",
            {"content-length": "50", "content-encoding": "gzip"},
            Cap(1_001, when_cut=too_big(1_000)),
        ),
        (
            "pdf",
            {"content-length": "50", "content-encoding": "br"},
            Cap(1_001, when_cut=too_big(1_000)),
        ),
    ],
)
def test_how_far_a_body_is_read(kind: str, headers: dict[str, str], want: Cap) -> None:
    got = _cap(kind, headers, Room(10_000))
    assert got._replace(room=None) == want
    # Its length unknown until it is read: the room is taken as the body grows.
    unknown = kind == "pdf" and ("content-length" not in headers or "content-encoding" in headers)
    assert (got.room is not None) == unknown


def test_short_of_room_a_stated_pdf_is_refused_before_its_download() -> None:
    shared = Room(400)
    now = too_big(500, now=True)
    assert _cap("pdf", {"content-length": "900"}, shared) == Cap(501, refused=now, when_cut=now)
    # What fits exactly fits: the byte past it is only how a longer body is told.
    assert _cap("pdf", {"content-length": "500"}, shared) == Cap(501, when_cut=LONGER_THAN_STATED)


def test_a_pdf_of_no_stated_length_takes_room_as_it_grows_and_gives_it_back() -> None:
    shared = Room(25 * STEP)
    others = shared.take(15 * STEP)  # other PDFs being read
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("deep_research.search.pdf_room._room", shared)
        with ExitStack() as held:
            got = cap("pdf", httpx.Headers(), held, 100, 20 * STEP)
            assert got.room is not None and got.size == 20 * STEP + 1
            grow = got.room
            assert grow(0) == 101 and shared.left == 10 * STEP  # a page's cap: no room
            assert grow(101) == 101, "a body of 100 bytes is whole without any"
            assert grow(102) == 101 + STEP and shared.left == 9 * STEP  # a step at a time
            assert grow(101 + STEP) == 101 + STEP, "within what it took: nothing more"
            assert grow(103 + 3 * STEP) == 103 + 3 * STEP  # what it needs
            assert grow(20 * STEP + 1) == 101 + 10 * STEP, "all there was"
            assert shared.left == 0
            assert got.why_cut(101 + 10 * STEP) == too_big(100 + 10 * STEP, now=True)
            # The others done, the body runs on to its cap: cut for its size, not the room.
            shared.give(others)
            assert grow(30 * STEP) == 20 * STEP + 1
            assert got.why_cut(20 * STEP + 1) == too_big(20 * STEP)
        assert shared.left == shared.size  # given back with `held`
    # Never past what it may read whole, whatever the room holds.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("deep_research.search.pdf_room._room", Room(100 * STEP))
        with ExitStack() as held:
            whole = cap("pdf", httpx.Headers(), held, 100, 1_000)
            assert whole.room is not None and whole.room(10**9) == 1_001
            assert whole.why_cut(1_001) == too_big(1_000)
            assert whole.why_cut(500) == too_big(1_000), "cut on the wire: for its size"


def test_a_pdf_cap_below_a_page_s_is_the_pdf_s() -> None:
    got = _cap("pdf", {}, Room(0), page=2_000, most=1_000)
    assert got._replace(room=None) == Cap(1_001, when_cut=too_big(1_000))
    assert got.room is not None and got.room(1_001) == 1_001, "a 1,000-byte PDF needs no room"
    assert got.room(10**6) == 1_001 and got.why_cut(1_001) == too_big(1_000)
