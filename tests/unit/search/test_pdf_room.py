"""search.pdf_room: one room of bytes for the process's PDFs past a page's cap."""

from __future__ import annotations

import threading

import pytest

from deep_research.search.pdf_room import ROOM, Room, room


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
