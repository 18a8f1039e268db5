"""The store on real Chroma (embedded) with the real MiniLM."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from blockbuster import blockbuster_ctx

from deep_research.memory import (
    LIBRARY_COLLECTION,
    REPORTS_COLLECTION,
    Location,
    MemoryUnavailable,
    Piece,
    open_store,
)
from deep_research.memory.chunks import split, token_count


@pytest.fixture
def where(tmp_path: Path) -> Location:
    return Location(path=tmp_path / "memory")


async def test_query_finds_the_similar_text_first_on_a_0_1_scale(where: Location) -> None:
    store = await open_store(where)
    await store.add(
        LIBRARY_COLLECTION, "cats", "Cats are small domestic felines that purr.", {"kind": "a"}
    )
    await store.add(
        LIBRARY_COLLECTION, "rust", "The Rust compiler checks borrows at compile time.", {}
    )
    hits = await store.query(LIBRARY_COLLECTION, "kittens purring", k=5)
    assert [h.key for h in hits] == ["cats", "rust"]
    assert all(0.0 <= h.similarity <= 1.0 for h in hits)
    assert hits[0].similarity > hits[1].similarity
    assert hits[0].metadata["kind"] == "a"


async def test_adding_the_same_key_again_replaces_it(where: Location) -> None:
    store = await open_store(where)
    long_text = " ".join(f"Sentence number {i} about tidal power stations." for i in range(200))
    first = await store.add(LIBRARY_COLLECTION, "doc", long_text, {"version": 1})
    assert first > 2
    again = await store.add(LIBRARY_COLLECTION, "doc", long_text, {"version": 1})
    assert again == first
    assert len(await store.items(LIBRARY_COLLECTION, where={"key": "doc"})) == first
    await store.add(LIBRARY_COLLECTION, "doc", "Now a short text.", {"version": 2})
    left = await store.items(LIBRARY_COLLECTION, where={"key": "doc"})
    assert [(h.text, h.metadata["version"]) for h in left] == [("Now a short text.", 2)]


async def test_put_many_writes_every_key_in_one_upsert_and_trims_each(
    where: Location, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_chroma import Chroma

    store = await open_store(where)
    upserts: list[int] = []
    original = Chroma.add_texts

    def counted(self: Chroma, texts: Any, *args: Any, **kwargs: Any) -> list[str]:
        upserts.append(len(list(texts)))
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Chroma, "add_texts", counted)
    three = [Piece(f"passage {i} on tidal power", {"n": i}) for i in range(3)]
    counts = await store.put_many(LIBRARY_COLLECTION, {"a": three, "b": three[:2], "c": []})
    assert counts == [3, 2, 0] and upserts == [5], "one write for every key"
    # Again, shorter: each key's old tail goes, and only its own.
    assert await store.put_many(LIBRARY_COLLECTION, {"a": three[:1], "b": three}) == [1, 3]
    kept = sorted((h.key, h.text) for h in await store.items(LIBRARY_COLLECTION))
    assert kept == [("a", "passage 0 on tidal power")] + [
        ("b", f"passage {i} on tidal power") for i in range(3)
    ]


async def test_put_many_trims_a_thousand_keys_at_once(where: Location) -> None:
    # Each key's stale tail is one term of an `$or`: SQLite refuses an expression deeper
    # than 1,000 ("Expression tree is too large"), past 986 keys in one query.
    store = await open_store(where)
    await store.put(LIBRARY_COLLECTION, "k0", [Piece("passage on tidal power", {})])
    counts = await store.put_many(LIBRARY_COLLECTION, {f"k{i}": [] for i in range(1_000)})
    assert counts == [0] * 1_000
    assert await store.items(LIBRARY_COLLECTION) == []


async def test_keys_that_redact_alike_are_one_item_not_a_duplicate_id(
    where: Location, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-supersecretvalue123456")
    store = await open_store(where)
    secret_key, redacted = "page?k=tvly-supersecretvalue123456", "page?k=[REDACTED]"
    counts = await store.put_many(
        LIBRARY_COLLECTION,
        {secret_key: [Piece("first", {})], redacted: [Piece("second", {}), Piece("third", {})]},
    )
    assert counts == [2, 2]
    hits = await store.items(LIBRARY_COLLECTION)
    assert sorted(h.text for h in hits) == ["second", "third"]
    assert "tvly-supersecretvalue123456" not in repr(hits)


async def test_filters_delete_and_clear(where: Location) -> None:
    store = await open_store(where)
    await store.put(
        LIBRARY_COLLECTION,
        "a.pdf",
        [Piece("page one text", {"page": 1}), Piece("two", {"page": 2})],
    )
    await store.add(LIBRARY_COLLECTION, "b.md", "other text", {"page": 1})
    page_two = await store.query(LIBRARY_COLLECTION, "text", k=10, where={"page": 2})
    assert [h.text for h in page_two] == ["two"]
    assert await store.delete(LIBRARY_COLLECTION, key="a.pdf") == 2
    assert [h.key for h in await store.items(LIBRARY_COLLECTION)] == ["b.md"]
    with pytest.raises(ValueError):
        await store.delete(LIBRARY_COLLECTION)
    await store.add(REPORTS_COLLECTION, "r", "a report", {})
    await store.clear(LIBRARY_COLLECTION)
    assert await store.items(LIBRARY_COLLECTION) == []
    assert [h.key for h in await store.items(REPORTS_COLLECTION)] == ["r"]


async def test_chunks_fit_the_minilm_window() -> None:
    text = "word " * 3000
    pieces = await asyncio.to_thread(split, text)
    assert len(pieces) > 5
    assert max(token_count(p) for p in pieces) <= 254


async def test_secrets_never_reach_the_store(
    where: Location, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-supersecretvalue123456")
    store = await open_store(where)
    await store.add(
        LIBRARY_COLLECTION,
        "k",
        "the key is tvly-supersecretvalue123456 here",
        {"note": "sk-abcdefghijklmnopqrstuvwx"},
    )
    (hit,) = await store.items(LIBRARY_COLLECTION)
    assert "supersecretvalue" not in hit.text
    assert "abcdefghijklmnop" not in str(hit.metadata)


async def test_secrets_a_store_already_holds_never_come_out(
    where: Location, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written by another client of a shared server, or before the key was set here: what
    the store gives back is redacted too (`memory search` prints it, researchers read it)."""
    store = await open_store(where)
    text = "the key is mykeyvalue-9f8e7d6c5b4a here"
    meta = {"note": "Bearer abcdefghijklmnop", "key": "k", "chunk": 0}
    await asyncio.to_thread(
        store._collection(LIBRARY_COLLECTION).add_texts, [text], [meta], ["raw"]
    )
    monkeypatch.setenv("SEARXNG_API_KEY", "mykeyvalue-9f8e7d6c5b4a")
    for hit in [
        *await store.items(LIBRARY_COLLECTION),
        *await store.query(LIBRARY_COLLECTION, text, k=1),
    ]:
        assert "mykeyvalue" not in hit.text and "[REDACTED]" in hit.text
        assert "abcdefghijklmnop" not in str(hit.metadata)


async def test_a_collection_another_client_deleted_is_made_again(where: Location) -> None:
    """On a shared server, `memory clear` in one terminal deletes the collections a running
    server holds handles to: its next write must not fail for the rest of its life."""
    store = await open_store(where)
    await store.add(LIBRARY_COLLECTION, "cats", "Cats are small domestic felines that purr.", {})
    await asyncio.to_thread(store._client.delete_collection, LIBRARY_COLLECTION)  # the other client
    await store.add(LIBRARY_COLLECTION, "dogs", "Dogs bark at the postman.", {})
    assert [hit.key for hit in await store.items(LIBRARY_COLLECTION)] == ["dogs"]


async def test_a_damaged_store_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(MemoryUnavailable, match="cannot be read.*move the directory away"):
        await open_store(Location(path=broken))


async def test_concurrent_writers_lose_nothing(where: Location) -> None:
    store = await open_store(where)
    topics = [f"note {i}: the migratory route of bird species number {i}" for i in range(40)]

    async def write(i: int) -> None:
        await store.add(LIBRARY_COLLECTION, f"n{i}", topics[i], {"i": i})

    await asyncio.gather(*(write(i) for i in range(len(topics))))
    for i, text in enumerate(topics):
        (best,) = await store.query(LIBRARY_COLLECTION, text, k=1)
        assert best.key == f"n{i}"


@pytest.mark.parametrize("memory_dir", ["absolute", "relative", "default"])
async def test_opening_the_configured_store_never_blocks_the_event_loop(
    memory_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # langgraph dev raises BlockingError for a file-system call on its event loop (it uses
    # blockbuster too): with memory on, a run there failed at its first recall. A relative
    # MEMORY_DIR asks for the working directory; unset, the data directory is computed.
    monkeypatch.chdir(tmp_path)
    if memory_dir == "default":
        monkeypatch.delenv("MEMORY_DIR")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "data"))
    else:
        where = tmp_path / "memory" if memory_dir == "absolute" else Path("memory")
        monkeypatch.setenv("MEMORY_DIR", str(where))
    with blockbuster_ctx():
        store = await open_store()
    expected = tmp_path / "home" if memory_dir == "default" else tmp_path / "memory"
    assert Path(store.where).is_relative_to(expected), store.where
    await store.add(LIBRARY_COLLECTION, "cats", "Cats purr.", {})
