"""The knowledge store: Chroma collections of MiniLM-embedded chunks, called off the loop.

Every item has a `key` (a report's thread, a page's URL, a file's path); its chunks get ids
derived from the collection, the key and the chunk's position, so adding the same key again
overwrites instead of duplicating, and a shorter text drops the old tail. Similarity is
cosine on 0-1 with negatives counted as 0, the scale of the relevance filter. Text and
string metadata pass the redactor before they are written and again when they are read:
secrets never reach the store, nor leave one that another client wrote.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from deep_research.embedding import embedder
from deep_research.memory import chunks
from deep_research.memory.catalogue import CHUNK, KEY, Scalar
from deep_research.memory.location import Location, MemoryUnavailable
from deep_research.text import secrets

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from langchain_chroma import Chroma

Metadata = Mapping[str, Scalar]
# A Chroma `where` filter: {"field": value}, {"field": {"$gte": 3}}, {"$and": [...]}.
Where = Mapping[str, Any]
MAX_RESULTS = 100
WRITE_BATCH = 1000  # chunks per Chroma call, below its batch limit
# Keys' stale tails per query: each is a term of one `$or`, and SQLite refuses an
# expression more than 1,000 deep (986 tails).
TAIL_BATCH = 100
T = TypeVar("T")


@dataclass(frozen=True)
class Piece:
    """One chunk to store, with its own metadata (e.g. a PDF page)."""

    text: str
    metadata: Metadata


@dataclass(frozen=True)
class Hit:
    """A stored chunk; `similarity` is 0-1 for a query's hits and 0 for a listing."""

    id: str
    key: str
    text: str
    metadata: dict[str, Scalar]
    similarity: float = 0.0


def store_errors() -> tuple[type[Exception], ...]:
    """The errors a Chroma call can end with when the store, not our code, is at fault.

    A function, not a constant: chromadb takes seconds to import, and this package is
    imported (to find where the memory is) by runs that never open it.
    """
    from chromadb.errors import ChromaError

    # InvalidURL: an address no URL can hold (CHROMA_HOST's typo), outside httpx's HTTPError.
    return (ChromaError, OSError, httpx.HTTPError, httpx.InvalidURL, ValueError)


def _collection_gone(error: Exception) -> bool:
    from chromadb.errors import NotFoundError

    return isinstance(error, NotFoundError) or "does not exist" in str(error)


def chunk_id(collection: str, key: str, index: int) -> str:
    digest = hashlib.sha256(f"{collection}\0{key}".encode()).hexdigest()[:32]
    return f"{digest}-{index}"


class Store:
    """One Chroma client; its collections are made on first use, in cosine space."""

    def __init__(self, client: ClientAPI, location: Location) -> None:
        self._client = client
        self.location = location
        self._collections: dict[str, Chroma] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def where(self) -> str:
        return self.location.describe()

    def close(self) -> None:
        """Let go of the client: an embedded store's database files, a server's connections.
        A call made after, or under way meanwhile, raises `MemoryUnavailable`."""
        session = getattr(getattr(self._client, "_server", None), "_session", None)
        with self._lock:
            self._closed = True
        try:
            close = getattr(self._client, "close", None)  # chromadb 1.5.x on; before, none
            if close is not None:
                close()
        finally:
            if isinstance(session, httpx.Client):  # `server.bounded_client`'s own
                session.close()

    def _closed_error(self) -> MemoryUnavailable:
        return MemoryUnavailable(f"memory at {self.where} was closed in this process")

    async def add(self, collection: str, key: str, text: str, metadata: Metadata) -> int:
        """Store `text` under `key` in MiniLM-sized chunks; returns how many."""
        pieces = await asyncio.to_thread(chunks.split, text)
        return await self.put(collection, key, [Piece(p, metadata) for p in pieces])

    async def put(self, collection: str, key: str, pieces: Sequence[Piece]) -> int:
        """Store `pieces` as `key`'s chunks, replacing any it had; returns how many."""
        return (await self.put_many(collection, {key: pieces}))[0]

    async def put_many(self, collection: str, items: Mapping[str, Sequence[Piece]]) -> list[int]:
        """`put` for several keys in one write (a report's cited pages: one upsert, not
        one each); returns how many chunks each key has, in `items`' order."""
        listed = [(key, list(pieces)) for key, pieces in items.items()]
        # The caller's mistake, said as one here: inside `_run` any ValueError is the
        # store's (chromadb raises them too), and the run would go on without memory.
        if any(KEY in piece.metadata or CHUNK in piece.metadata for _, p in listed for piece in p):
            raise ValueError(f"metadata may not set {KEY!r} or {CHUNK!r}")
        return await self._run(self._put, collection, listed)

    async def query(
        self, collection: str, text: str, *, k: int = 5, where: Where | None = None
    ) -> list[Hit]:
        """The `k` chunks most similar to `text` (matching `where`), most similar first."""
        return await self._run(self._query, collection, text, k, where)

    async def items(
        self,
        collection: str,
        *,
        where: Where | None = None,
        limit: int | None = None,
        texts: bool = True,
    ) -> list[Hit]:
        """Stored chunks matching `where` (all when None), in no particular order; with
        `texts=False` their metadata alone (a listing need not hold every text at once)."""
        return await self._run(self._items, collection, where, limit, texts)

    async def delete(
        self, collection: str, *, key: str | None = None, where: Where | None = None
    ) -> int:
        """Delete `key`'s chunks, or those matching `where`; returns how many went."""
        if key is not None:
            where = {KEY: key} if where is None else {"$and": [{KEY: key}, dict(where)]}
        if not where:
            raise ValueError("delete needs a key or a filter; use clear() to empty the store")
        return await self._run(self._delete, collection, where)

    async def clear(self, collection: str) -> None:
        """Delete everything in `collection`."""
        await self._run(self._clear, collection)

    async def _run(self, call: Callable[..., T], collection: str, *args: Any) -> T:
        try:
            return await self._attempt(call, collection, *args)
        except store_errors() as error:
            if not _collection_gone(error):
                raise MemoryUnavailable(f"memory at {self.where} failed: {error}") from error
        # Another client of a shared server deleted the collection (`memory clear`): the
        # cached handle names its old id, so it is made again, once.
        with self._lock:
            self._collections.pop(collection, None)
        try:
            return await self._attempt(call, collection, *args)
        except store_errors() as error:
            raise MemoryUnavailable(f"memory at {self.where} failed: {error}") from error

    async def _attempt(self, call: Callable[..., T], collection: str, *args: Any) -> T:
        try:
            return await asyncio.to_thread(call, collection, *args)
        except Exception as error:
            if self._closed:  # whatever chromadb raised with its client closed under it
                raise self._closed_error() from error
            raise

    def open_collections(self, collections: Sequence[str]) -> None:
        """Make each collection's handle now (blocking: langchain-chroma imported, each got
        or created), so that the first write to it does not; for a background thread."""
        for name in collections:
            self._collection(name)

    def _collection(self, name: str) -> Chroma:
        with self._lock:
            if self._closed:
                raise self._closed_error()
            if name not in self._collections:
                from langchain_chroma import Chroma

                self._collections[name] = Chroma(
                    client=self._client,
                    collection_name=name,
                    embedding_function=embedder(),
                    collection_metadata={"hnsw:space": "cosine"},
                )
            return self._collections[name]

    def _put(self, collection: str, items: list[tuple[str, list[Piece]]]) -> list[int]:
        store = self._collection(collection)
        redact = secrets.redactor().text  # one environment for the whole write
        # Keyed by the redacted key: two keys that redact alike are one item (the later),
        # never two writes of the same chunk ids in one upsert.
        chunks_of: dict[str, tuple[list[str], list[dict[str, Scalar]]]] = {}
        for key, pieces in items:
            clean_key = redact(key)
            texts, metadatas = [], []
            for index, piece in enumerate(pieces):
                clean = {
                    k: redact(v) if isinstance(v, str) else v for k, v in piece.metadata.items()
                }
                texts.append(redact(piece.text))
                metadatas.append({**clean, KEY: clean_key, CHUNK: index})
            chunks_of[clean_key] = (texts, metadatas)
        texts, metadatas, ids = [], [], []
        for key, (key_texts, key_metadatas) in chunks_of.items():
            texts += key_texts
            metadatas += key_metadatas
            ids += [chunk_id(collection, key, index) for index in range(len(key_texts))]
        for start in range(0, len(texts), WRITE_BATCH):  # an upsert: same id, replaced
            stop = start + WRITE_BATCH
            store.add_texts(texts[start:stop], metadatas=metadatas[start:stop], ids=ids[start:stop])
        # A shorter text than last time leaves old chunks behind: drop them.
        tails: list[Any] = [
            {"$and": [{KEY: key}, {CHUNK: {"$gte": len(key_texts)}}]}
            for key, (key_texts, _) in chunks_of.items()
        ]
        for start in range(0, len(tails), TAIL_BATCH):
            some = tails[start : start + TAIL_BATCH]
            stale = store.get(where=some[0] if len(some) == 1 else {"$or": some}, include=[])
            if stale["ids"]:
                store.delete(ids=stale["ids"])
        return [len(chunks_of[redact(key)][0]) for key, _ in items]

    def _query(self, collection: str, text: str, k: int, where: Where | None) -> list[Hit]:
        store = self._collection(collection)
        found = store.similarity_search_with_score(
            text, k=max(1, min(k, MAX_RESULTS)), filter=dict(where) if where else None
        )
        return [
            _hit(
                str(doc.id),
                doc.page_content,
                doc.metadata,
                # Cosine distance is 1 - similarity; negatives count as 0, as for relevance.
                round(min(1.0, max(0.0, 1.0 - float(distance))), 3),
            )
            for doc, distance in found
        ]

    def _items(
        self, collection: str, where: Where | None, limit: int | None, texts: bool
    ) -> list[Hit]:
        include = ["metadatas", "documents"] if texts else ["metadatas"]
        got = self._collection(collection).get(
            where=dict(where) if where else None, limit=limit, include=include
        )
        documents = got.get("documents") or [""] * len(got["ids"])
        return [
            _hit(i, d or "", m or {})
            for i, d, m in zip(got["ids"], documents, got["metadatas"], strict=True)
        ]

    def _delete(self, collection: str, where: Where) -> int:
        store = self._collection(collection)
        ids = store.get(where=dict(where), include=[])["ids"]
        if ids:
            store.delete(ids=ids)
        return len(ids)

    def _clear(self, collection: str) -> None:
        with self._lock:
            if any(c.name == collection for c in self._client.list_collections()):
                self._client.delete_collection(collection)
            self._collections.pop(collection, None)


def _hit(item_id: str, text: str, metadata: Mapping[str, Any], similarity: float = 0.0) -> Hit:
    """A stored chunk as it may leave the store: redacted again, since a shared server's
    other clients, or this one before a key was set, may have written a secret."""
    redact = secrets.redact
    clean = {k: redact(v) if isinstance(v, str) else v for k, v in metadata.items()}
    return Hit(item_id, str(clean.get(KEY, "")), redact(text), clean, similarity)
