"""`memory.prepare` at its edges: nothing with memory off, silent when the store is locked
(`remember` names it), and a first run's store opened as the run starts."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from deep_research.memory import preparing
from deep_research.memory.location import LOCK_NAME
from deep_research.state import Source
from tests.support.memory_prepare import MEMORY_ON, PREPARE, run, watch_target, world

__all__ = ["world"]  # the fixture the tests use


@pytest.mark.usefixtures("world")
async def test_with_memory_off_nothing_is_prepared_and_no_store_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    memory = tmp_path / "memory"
    monkeypatch.setenv("MEMORY_DIR", str(memory))
    reports: list[str] = []
    real_prepare = preparing.prepare

    def watched_prepare(given: list[str], sources: list[Source], context: Any) -> None:
        reports.extend(given)
        real_prepare(given, sources, context)

    monkeypatch.setattr(preparing, "prepare", watched_prepare)
    ran, _ = watch_target(monkeypatch)

    values, events = await run({**MEMORY_ON, "use_memory": False})

    assert values["final_report"] and reports, "research came back with a report"
    assert ran == []
    assert not memory.exists()
    assert not [e for e in events if e["event"].startswith("memory")]


@pytest.mark.usefixtures("world")
async def test_a_locked_store_leaves_prepare_silent_and_remember_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = Path(os.environ["MEMORY_DIR"])
    ran, raised = watch_target(monkeypatch)
    holder = FileLock(str(memory / LOCK_NAME), timeout=0, thread_local=False)
    holder.acquire()  # another process's lock, as far as this one can tell
    try:
        values, events = await run(MEMORY_ON)
    finally:
        holder.release()

    assert ran == [PREPARE]
    assert [type(error).__name__ for error in raised] == ["MemoryUnavailable"], raised
    assert values["final_report"] and values["citation_check"]["links_kept"] >= 1
    reasons = [e["reason"] for e in events if e.get("status") == "unavailable"]
    assert len(reasons) == 1 and "in use by another process" in reasons[0]
    assert not [e for e in events if e["event"] == "memory_saved"]


@pytest.mark.usefixtures("world")
async def test_a_first_runs_store_is_opened_as_the_run_starts_not_after_the_research(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No store yet: `recall` has nothing to open, yet chromadb's import and the shared
    server's start take seconds; they start with the run, on a thread of their own."""
    monkeypatch.setenv("MEMORY_DIR", str(tmp_path / "memory"))
    order: list[str] = []
    opened: list[tuple[str, object]] = []  # (thread, what the open gave)
    real_open_early = preparing.open_early
    real_prepare = preparing.prepare

    def watched_open_early(location: Any = None) -> None:
        order.append("open")
        assert location is not None and location.path == tmp_path / "memory"
        real_open_early(location)

    def watched_prepare(given: list[str], sources: list[Source], context: Any) -> None:
        order.append("prepare")
        real_prepare(given, sources, context)

    from deep_research.memory import open as opening

    real_blocking = opening.open_store_blocking

    def watched_blocking(*args: Any, **kwargs: Any) -> Any:
        store = real_blocking(*args, **kwargs)
        opened.append((threading.current_thread().name, store))
        return store

    monkeypatch.setattr(preparing, "open_early", watched_open_early)
    monkeypatch.setattr(preparing, "prepare", watched_prepare)
    monkeypatch.setattr(opening, "open_store_blocking", watched_blocking)

    values, events = await run(MEMORY_ON)
    for thread in threading.enumerate():
        if thread.name == "memory-open":
            await asyncio.to_thread(thread.join, 120)

    assert order == ["open", "prepare"]
    assert "memory-open" in [name for name, _ in opened]
    assert len({id(store) for _, store in opened}) == 1, "one store, opened once"
    assert [e for e in events if e["event"] == "memory_saved"]
    assert values["final_report"]
