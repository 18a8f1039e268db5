"""memory.open.close_stores: the process lets go of its stores' files, locks, leases and
connections, and the next open finds what they held."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import httpx
import pytest

from deep_research.memory import LIBRARY_COLLECTION, Location, sharing
from deep_research.memory.location import hold_directory
from deep_research.memory.open import close_stores, open_store

pytestmark = pytest.mark.slow  # chromadb, and a keeper started for the shared directory


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


async def test_an_embedded_store_closed_lets_its_directory_go_and_opens_again(
    tmp_path: Path,
) -> None:
    where = Location(path=tmp_path / "memory")
    store = await open_store(where)
    await store.add(LIBRARY_COLLECTION, "pumps", "Heat pumps work in the cold.", {})
    assert descriptors_under(tmp_path / "memory"), "the open store holds its files"

    close_stores()
    del store
    gc.collect()  # chromadb's client and its bindings refer to each other

    assert descriptors_under(tmp_path / "memory") == []
    hold_directory(tmp_path / "memory").release()  # no longer held by this process
    again = await open_store(where)
    [hit] = await again.query(LIBRARY_COLLECTION, "heat pumps in winter", k=1)
    assert hit.text == "Heat pumps work in the cold."


async def test_a_shared_store_closed_gives_its_lease_and_connections_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_SERVER_IDLE", "600")
    directory = tmp_path / "memory"
    try:
        store = await open_store(Location(path=directory, shared=True))
        await store.add(LIBRARY_COLLECTION, "pumps", "Heat pumps work in the cold.", {})
        session = store._client._server._session  # type: ignore[attr-defined]
        assert isinstance(session, httpx.Client) and not session.is_closed
        leased = [name for name in descriptors_under(directory) if name.endswith("users")]
        assert leased, "the process leases the keeper"

        close_stores()

        assert session.is_closed
        assert [n for n in descriptors_under(directory) if n.endswith("users")] == []
        again = await open_store(Location(path=directory, shared=True))
        [hit] = await again.query(LIBRARY_COLLECTION, "heat pumps in winter", k=1)
        assert hit.text == "Heat pumps work in the cold."
    finally:
        close_stores()
        sharing.stop(directory)


def test_closing_with_nothing_open_does_nothing() -> None:
    close_stores()
    close_stores()
