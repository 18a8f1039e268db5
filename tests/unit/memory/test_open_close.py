"""memory.open.close_stores: the process lets go of its stores' files, locks, leases and
connections; a store handed out before says it was closed; the next open finds what they
held."""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from deep_research.memory import LIBRARY_COLLECTION, Location, MemoryUnavailable, sharing
from deep_research.memory import open as opened
from deep_research.memory.location import CATALOGUE, hold_directory
from deep_research.memory.open import close_stores, open_store
from deep_research.memory.record import read_record
from deep_research.memory.store import Store

pytestmark = pytest.mark.slow  # chromadb, and a keeper started for the shared directory

TEXT = "Heat pumps work in the cold."
GONE_SECONDS = 60.0  # a keeper stops within its idle time, plus Chroma's shutdown


def descriptors_under(directory: Path) -> list[str]:
    """This process's open files inside `directory`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed since
            continue
        if target.startswith(f"{directory}/"):
            found.append(target)
    return found


async def found_again(location: Location) -> str:
    [hit] = await (await open_store(location)).query(LIBRARY_COLLECTION, "heat pumps", k=1)
    return hit.text


async def test_an_embedded_store_closed_lets_its_directory_go_and_opens_again(
    tmp_path: Path,
) -> None:
    where = Location(path=tmp_path / "memory")
    store = await open_store(where)
    await store.add(LIBRARY_COLLECTION, "pumps", TEXT, {})
    lock = opened._locks[where]  # held here, so only `close_stores` can release it
    assert lock.is_locked and descriptors_under(tmp_path / "memory")

    close_stores()

    assert not lock.is_locked
    with pytest.raises(MemoryUnavailable, match="was closed in this process"):
        await store.query(LIBRARY_COLLECTION, "heat pumps", k=1)
    with pytest.raises(MemoryUnavailable, match="was closed in this process"):
        store.open_collections(["reports"])
    del store
    gc.collect()  # chromadb's client and its bindings refer to each other
    assert descriptors_under(tmp_path / "memory") == []
    assert await found_again(where) == TEXT


async def test_a_call_under_way_when_its_store_is_closed_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store(Location(path=tmp_path / "memory"))
    await store.add(LIBRARY_COLLECTION, "pumps", TEXT, {})
    handle = store._collection(LIBRARY_COLLECTION)
    search = handle.similarity_search_with_score

    def closed_meanwhile(*args: Any, **kwargs: Any) -> Any:
        close_stores()  # another thread's, as chromadb starts the search
        return search(*args, **kwargs)

    monkeypatch.setattr(handle, "similarity_search_with_score", closed_meanwhile)
    with pytest.raises(MemoryUnavailable, match="was closed in this process"):
        await store.query(LIBRARY_COLLECTION, "heat pumps", k=1)


async def test_a_shared_store_closed_gives_its_lease_back_and_its_keeper_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_SERVER_IDLE", "2")
    directory = tmp_path / "memory"
    location = Location(path=directory, shared=True)
    try:
        store = await open_store(location)
        await store.add(LIBRARY_COLLECTION, "pumps", TEXT, {})
        session = store._client._server._session  # type: ignore[attr-defined]
        assert isinstance(session, httpx.Client) and not session.is_closed
        record = read_record(directory)
        assert record is not None
        time.sleep(3)  # past its idle time: leased, it keeps serving
        assert sharing._alive(record.pid)
        assert [name for name in descriptors_under(directory) if name.endswith("users")]

        close_stores()

        assert session.is_closed
        assert [name for name in descriptors_under(directory) if name.endswith("users")] == []
        deadline = time.monotonic() + GONE_SECONDS
        while sharing._alive(record.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not sharing._alive(record.pid), "the keeper stopped once nobody used it"
        assert await found_again(location) == TEXT  # through a keeper started again
    finally:
        close_stores()
        sharing.stop(directory)


async def not_sqlite(directory: Path) -> None:
    directory.mkdir()
    (directory / CATALOGUE).write_bytes(b"\x00not sqlite" * 500)  # chromadb cannot start


async def no_collections_table(directory: Path) -> None:
    await open_store(Location(path=directory))
    close_stores()
    with sqlite3.connect(directory / CATALOGUE) as catalogue:  # it starts, cannot list
        catalogue.execute("DROP TABLE collections")


@pytest.mark.parametrize("damage", [not_sqlite, no_collections_table])
async def test_a_damaged_store_lets_its_files_go_and_is_tried_again_after_the_close(
    tmp_path: Path, damage: Callable[[Path], Awaitable[None]]
) -> None:
    directory = tmp_path / "memory"
    await damage(directory)
    where = Location(path=directory)
    with pytest.raises(MemoryUnavailable, match="move the directory away") as first:
        await open_store(where)
    gc.collect()
    assert descriptors_under(directory) == [], "the damaged store's files are let go of"
    with pytest.raises(MemoryUnavailable) as again:
        await open_store(where)
    assert again.value is first.value  # its first error, repeated

    directory.rename(tmp_path / "damaged")  # as the error says
    close_stores()

    store = await open_store(where)
    await store.add(LIBRARY_COLLECTION, "pumps", TEXT, {})
    assert await found_again(where) == TEXT


async def test_a_store_that_fails_to_close_leaves_the_others_let_go_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = Location(path=tmp_path / "first")
    second = Location(path=tmp_path / "second")
    failing = await open_store(first)
    await open_store(second)
    locks = [opened._locks[first], opened._locks[second]]

    def refuse(self: Store) -> None:
        raise OSError("cannot close")

    monkeypatch.setattr(Store, "close", refuse)
    with pytest.raises(OSError, match="cannot close"):
        close_stores()
    monkeypatch.undo()

    assert [lock.is_locked for lock in locks] == [False, False]
    assert opened._stores == {} and opened._locks == {}
    close_stores()  # nothing left to let go of, and nothing closed twice
    assert failing.location == first


async def test_an_open_begun_on_a_thread_before_the_close_does_not_hold_the_store_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`open_early`'s thread waits for the run's first model request; a close meanwhile
    (the run stopped before it) is not undone when the thread goes on."""
    from deep_research.memory import preparing
    from deep_research.runtime import process

    await open_store(Location(path=tmp_path / "other"))  # the store's modules imported
    go = threading.Event()
    monkeypatch.setattr(process, "after_first_model_request", go.wait)
    where = Location(path=tmp_path / "memory")
    preparing.open_early(where)
    [thread] = [t for t in threading.enumerate() if t.name == "memory-open"]

    close_stores()
    go.set()
    thread.join(timeout=60)

    assert not thread.is_alive() and opened._stores == {}
    hold_directory(tmp_path / "memory").release()  # not held by this process
