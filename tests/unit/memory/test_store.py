"""memory.store on real Chroma (embedded) with the real MiniLM: ids, filters, refusals
(test_store_chroma.py holds the store's older tests, through the package's names)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.memory.location import Location, MemoryUnavailable
from deep_research.memory.open import open_store
from deep_research.memory.store import CHUNK, KEY, Piece, Store, chunk_id

# chromadb's import and MiniLM's load take seconds on a first use.
pytestmark = pytest.mark.slow
NOTES = "notes"


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await open_store(Location(path=tmp_path / "memory"))


def test_chunk_ids_are_stable_per_collection_key_and_place_and_hide_the_key() -> None:
    assert chunk_id(NOTES, "k", 0) == chunk_id(NOTES, "k", 0)
    ids = {chunk_id(c, k, i) for c in ("a", "b") for k in ("k", "k2") for i in (0, 1)}
    assert len(ids) == 8
    assert "secret-path" not in chunk_id(NOTES, "/home/u/secret-path.pdf", 3)
    assert chunk_id(NOTES, "k", 3).endswith("-3")


async def test_hostile_text_comes_back_as_written(store: Store) -> None:
    text = '<script>alert(1)</script> \x1b]8;;https://e.example\x07 — 中文 🌍 {"k": [1]}'
    assert await store.put(NOTES, "hostile", [Piece(text, {"title": "<b>t</b>"})]) == 1
    [hit] = await store.items(NOTES)
    assert (hit.text, hit.key, hit.metadata["title"]) == (text, "hostile", "<b>t</b>")
    assert hit.metadata[CHUNK] == 0 and hit.id == chunk_id(NOTES, "hostile", 0)


async def test_a_query_of_the_stored_text_is_near_one_and_k_is_at_least_one(store: Store) -> None:
    await store.add(NOTES, "tides", "Tidal power stations turn the sea's rise into power.", {})
    await store.add(NOTES, "cats", "Cats are small domestic felines.", {})
    [hit] = await store.query(NOTES, "Tidal power stations turn the sea's rise into power.", k=0)
    assert hit.key == "tides" and hit.similarity >= 0.99


async def test_metadata_that_sets_the_stores_own_keys_writes_nothing(store: Store) -> None:
    for reserved in (KEY, CHUNK):
        with pytest.raises(ValueError, match="may not set"):
            await store.put(NOTES, "k", [Piece("text", {reserved: "forged"})])
    assert await store.items(NOTES) == []


async def test_metadata_that_sets_the_stores_own_keys_is_the_callers_value_error(
    store: Store,
) -> None:
    """A caller's mistake, not a broken store: wrapped as MemoryUnavailable, it read as
    "memory ... failed" and the run went on without memory instead of failing."""
    await store.put(NOTES, "fine", [Piece("kept", {})])
    for reserved in (KEY, CHUNK):
        with pytest.raises(ValueError, match="may not set") as caught:
            await store.put_many(NOTES, {"k": [Piece("ok", {})], "j": [Piece("t", {reserved: 1})]})
        assert not isinstance(caught.value, MemoryUnavailable)
    assert [hit.key for hit in await store.items(NOTES)] == ["fine"]  # nothing of it written


async def test_a_listing_without_texts_keeps_the_metadata(store: Store) -> None:
    await store.put(NOTES, "doc", [Piece("page one", {"page": 1}), Piece("page two", {"page": 2})])
    hits = await store.items(NOTES, texts=False)
    assert sorted(h.metadata["page"] for h in hits) == [1, 2]
    assert {h.text for h in hits} == {""} and {h.key for h in hits} == {"doc"}
    assert len(await store.items(NOTES, limit=1)) == 1


async def test_delete_by_key_and_filter_removes_only_what_both_match(store: Store) -> None:
    await store.put(NOTES, "a", [Piece("one", {"page": 1}), Piece("two", {"page": 2})])
    await store.put(NOTES, "b", [Piece("three", {"page": 2})])
    assert await store.delete(NOTES, key="a", where={"page": 2}) == 1
    assert sorted(h.text for h in await store.items(NOTES)) == ["one", "three"]
    assert await store.delete(NOTES, where={"page": 99}) == 0
    with pytest.raises(ValueError, match="use clear"):  # never everything by mistake
        await store.delete(NOTES)
    assert len(await store.items(NOTES)) == 2


async def test_a_filter_the_store_refuses_is_memory_unavailable_naming_where(store: Store) -> None:
    await store.add(NOTES, "k", "text", {})
    with pytest.raises(MemoryUnavailable, match=str(store.location.path)):
        await store.items(NOTES, where={"$nonsense": [1]})


async def test_clearing_a_collection_never_made_is_harmless(store: Store) -> None:
    await store.clear("never-made")
    assert await store.items("never-made") == []
