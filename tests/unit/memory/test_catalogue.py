"""memory.catalogue: Chroma's catalogue read without chromadb lists what chromadb holds,
and answers None (ask chromadb) for a catalogue it does not know or cannot read."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from deep_research.memory import (
    LIBRARY_COLLECTION,
    REPORTS_COLLECTION,
    Location,
    Piece,
    Store,
    catalogue,
    open_store,
)
from deep_research.memory.location import CATALOGUE

pytestmark = pytest.mark.slow  # real Chroma and MiniLM: seconds on a first use


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await open_store(Location(path=tmp_path / "memory"))


def _sorted(records: list[dict[str, object]]) -> list[dict[str, object]]:
    return sorted(records, key=lambda r: (str(r["key"]), int(str(r["chunk"]))))


async def _held(store: Store, collection: str) -> list[dict[str, object]]:
    return _sorted([dict(h.metadata) for h in await store.items(collection, texts=False)])


async def test_it_reads_what_chromadb_holds_after_puts_and_deletes(
    store: Store, tmp_path: Path
) -> None:
    meta = {"title": "T", "page": 2, "score": 0.5, "ok": True}
    await store.put(LIBRARY_COLLECTION, "a", [Piece("one", meta), Piece("two", meta)])
    await store.put(LIBRARY_COLLECTION, "b", [Piece("three", {"title": "B"})])
    path = tmp_path / "memory"
    read = catalogue.read(path, LIBRARY_COLLECTION)
    assert read is not None and _sorted(list(read)) == await _held(store, LIBRARY_COLLECTION)
    assert {(r["key"], r["chunk"]) for r in read} == {("a", 0), ("a", 1), ("b", 0)}
    first = next(r for r in read if r["key"] == "a")
    assert (first["page"], first["score"], first["ok"]) == (2, 0.5, True)
    assert all("chroma:document" not in r for r in read)  # metadata, never the text

    await store.put(LIBRARY_COLLECTION, "a", [Piece("shorter", meta)])  # drops a's tail
    await store.delete(LIBRARY_COLLECTION, key="b")
    read = catalogue.read(path, LIBRARY_COLLECTION)
    assert read is not None and _sorted(list(read)) == await _held(store, LIBRARY_COLLECTION)
    assert [(r["key"], r["chunk"]) for r in read] == [("a", 0)]

    await store.clear(LIBRARY_COLLECTION)
    assert catalogue.read(path, LIBRARY_COLLECTION) == []


async def test_equal_filters_by_type_as_chromadb_does(store: Store, tmp_path: Path) -> None:
    await store.put(LIBRARY_COLLECTION, "a", [Piece("x", {"n": 1}), Piece("y", {"n": 2})])
    await store.put(LIBRARY_COLLECTION, "b", [Piece("z", {"n": "1", "flag": True})])
    path = tmp_path / "memory"
    assert [r["key"] for r in catalogue.read(path, LIBRARY_COLLECTION, ("n", 1)) or []] == ["a"]
    assert [r["key"] for r in catalogue.read(path, LIBRARY_COLLECTION, ("n", "1")) or []] == ["b"]
    flagged = catalogue.read(path, LIBRARY_COLLECTION, ("flag", True)) or []
    assert [r["key"] for r in flagged] == ["b"]
    chunk0 = catalogue.read(path, LIBRARY_COLLECTION, ("chunk", 0)) or []
    assert sorted(str(r["key"]) for r in chunk0) == ["a", "b"]


async def test_first_reads_one_match_of_the_collection_only(store: Store, tmp_path: Path) -> None:
    """`nothing_remembered` asks on each search step whether any report is stored: one
    report's first chunk answers it, and another collection's chunk never does."""
    path = tmp_path / "memory"
    await store.put(LIBRARY_COLLECTION, "doc", [Piece("x", {}), Piece("y", {})])
    assert catalogue.read(path, REPORTS_COLLECTION, ("chunk", 0), first=True) == []
    for key in ("r1", "r2", "r3"):
        await store.put(REPORTS_COLLECTION, key, [Piece("a", {}), Piece("b", {})])
    [one] = catalogue.read(path, REPORTS_COLLECTION, ("chunk", 0), first=True) or [{}]
    assert one["key"] in {"r1", "r2", "r3"} and one["chunk"] == 0
    assert len(catalogue.read(path, REPORTS_COLLECTION, ("chunk", 0)) or []) == 3


async def test_a_collection_never_made_is_empty_and_a_secret_is_redacted(
    store: Store, tmp_path: Path
) -> None:
    await store.put(LIBRARY_COLLECTION, "a", [Piece("x", {})])
    path = tmp_path / "memory"
    assert catalogue.read(path, "no-such-collection") == []
    # Another client of the store may have written a secret: it leaves redacted.
    db = sqlite3.connect(path / CATALOGUE)
    with db:
        db.execute(
            "UPDATE embedding_metadata SET string_value = ? WHERE key = 'key'",
            ("sk-proj-SECRET0123456789abcdefghij",),
        )
    db.close()
    [record] = catalogue.read(path, LIBRARY_COLLECTION) or [{}]
    assert "SECRET0123456789" not in str(record["key"])


async def test_an_unknown_schema_or_a_lagging_segment_is_left_to_chromadb(
    store: Store, tmp_path: Path
) -> None:
    await store.put(LIBRARY_COLLECTION, "a", [Piece("x", {})])
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "memory", copy)
    assert catalogue.read(copy, LIBRARY_COLLECTION) is not None
    db = sqlite3.connect(copy / CATALOGUE)
    with db:  # a write queued that the metadata segment has not applied
        db.execute("UPDATE max_seq_id SET seq_id = seq_id - 1")
    assert catalogue.read(copy, LIBRARY_COLLECTION) is None
    with db:
        db.execute("UPDATE max_seq_id SET seq_id = seq_id + 1")
        db.execute(
            "INSERT INTO migrations (dir, version, filename, sql, hash) "
            "VALUES ('sysdb', 99, 'future.sql', '', '')"
        )
    db.close()
    assert catalogue.read(copy, LIBRARY_COLLECTION) is None


async def test_a_catalogue_locked_by_a_writer_is_left_to_chromadb(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.put(LIBRARY_COLLECTION, "a", [Piece("x", {})])
    monkeypatch.setattr(catalogue, "BUSY_SECONDS", 0.05)
    writer = sqlite3.connect(tmp_path / "memory" / CATALOGUE, check_same_thread=False)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        assert catalogue.read(tmp_path / "memory", LIBRARY_COLLECTION) is None
    finally:
        writer.rollback()
        writer.close()
    assert catalogue.read(tmp_path / "memory", LIBRARY_COLLECTION) is not None


def test_a_missing_or_damaged_file_is_left_to_chromadb(tmp_path: Path) -> None:
    assert catalogue.read(tmp_path, LIBRARY_COLLECTION) is None
    (tmp_path / CATALOGUE).write_bytes(b"not a database at all" * 100)
    assert catalogue.read(tmp_path, LIBRARY_COLLECTION) is None
    assert not (tmp_path / f"{CATALOGUE}-journal").exists()  # read-only: nothing written
