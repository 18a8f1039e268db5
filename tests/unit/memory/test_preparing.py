"""`prepare` called directly: it starts one thread for the reports it is given, none with
memory off or nothing to prepare."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

import pytest

from deep_research.config.settings import Context
from deep_research.memory import preparing
from deep_research.state import Source

SOURCES = [Source(url="https://a.example", title="A", content="text", found_by="q")]


def test_prepare_starts_one_named_daemon_thread_only_with_memory_on_and_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[tuple[list[str], list[Source], str, bool]] = []

    class Thread:
        def __init__(self, *, target: Any, args: tuple[Any, ...], name: str, daemon: bool) -> None:
            self.seen = (args[0], args[1], name, daemon)

        def start(self) -> None:
            started.append(self.seen)

    monkeypatch.setattr(threading, "Thread", Thread)
    preparing.prepare(["r1"], SOURCES, Context(use_memory=True))
    preparing.prepare([], SOURCES, Context(use_memory=True))
    preparing.prepare(["r2"], SOURCES, Context(use_memory=False))
    assert started == [(["r1"], SOURCES, "memory-prepare", True)]


def test_a_failure_while_preparing_stays_on_its_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(reports: list[str], sources: list[Source], begun: int) -> None:
        raise RuntimeError("store damaged")

    monkeypatch.setattr(preparing, "_prepare", broken)
    preparing._prepare_quietly(["r"], SOURCES, contextvars.copy_context(), 0)  # does not raise


def test_a_process_that_cannot_start_a_thread_leaves_the_early_work_to_remember(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A container's thread limit reached: the run goes on (the report it paid for is
    written), and `remember` embeds what it stores."""

    def refused(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    preparing.prepare_part("## A part\n\nIts text.", Context(use_memory=True))
    preparing.prepare(["r1"], SOURCES, Context(use_memory=True))
    preparing.open_early()


def test_a_part_is_prepared_on_its_own_thread_only_with_memory_on_and_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[tuple[Any, ...]] = []
    monkeypatch.setattr(preparing, "_start", lambda target, *args: started.append(args))
    preparing.prepare_part("## A\n\nText.", Context(use_memory=True))
    preparing.prepare_part("  \n", Context(use_memory=True))
    preparing.prepare_part("## B\n\nText.", Context(use_memory=False))
    assert started == [("## A\n\nText.", "")]


def test_only_the_pages_remember_stores_are_prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library document is the library's and a page recalled from memory is stored
    already: neither is split nor embedded early (its split would be kept, never taken)."""
    from deep_research.memory import open as opening

    class Store:
        def open_collections(self, names: list[str]) -> None:
            pass

    monkeypatch.setattr(opening, "open_store_blocking", lambda location=None, **_: Store())
    embedded: list[list[str]] = []
    monkeypatch.setattr(preparing, "_embed", embedded.append)
    sources = [
        Source(url="https://web.example/a", title="Web", content="Read today.", found_by="q"),
        Source(url="file:///docs/b.txt", title="Mine", content="My notes.", found_by="q"),
        Source(
            url="https://old.example/c",
            title="Recalled",
            content="Read before.",
            found_by="q",
            retrieved="2026-01-02",
        ),
    ]
    report = "See [a](https://web.example/a), [b](file:///docs/b.txt), [c](https://old.example/c)."
    preparing._prepare([report], sources)
    assert embedded == [["Read today."]]
