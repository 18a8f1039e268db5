"""Opening the store once per process: a Chroma server, or a locked local directory."""

from __future__ import annotations

import asyncio
import threading

from filelock import FileLock

from deep_research.embedding import loader
from deep_research.embedding.files import WeightsUnavailable
from deep_research.memory.location import Location, MemoryUnavailable, configured, hold_directory
from deep_research.memory.store import Store, store_errors

_stores: dict[Location, Store] = {}
# The directory locks this process holds: kept for the process's life, as its store is.
_locks: dict[Location, FileLock] = {}
# Stores found damaged: chromadb keeps a broken client for the path, so opening it again
# would fail with an unrelated error; the first, readable one is repeated instead.
_damaged: dict[Location, MemoryUnavailable] = {}
_open_lock = threading.Lock()


async def open_store(location: Location | None = None) -> Store:
    """The store at `location` (default: the environment's), or `MemoryUnavailable`."""
    return await asyncio.to_thread(open_store_blocking, location)


def open_store_blocking(location: Location | None = None) -> Store:
    # `configured()` asks for the working directory: a blocking call, so never on the loop.
    location = location or configured()
    with _open_lock:
        if location in _damaged:
            raise _damaged[location]
        if location not in _stores:
            _stores[location] = _connect(location)
        return _stores[location]


def _connect(location: Location) -> Store:
    try:  # memory embeds with MiniLM: it uses the model on this machine, never fetches it
        loader.weights()
    except WeightsUnavailable as error:
        raise MemoryUnavailable(f"memory needs the relevance model: {error}") from None
    import chromadb  # seconds to import: only when a store is opened
    from chromadb.config import Settings
    from chromadb.errors import ChromaError

    settings = Settings(anonymized_telemetry=False)
    if location.host is not None:
        try:
            client = chromadb.HttpClient(host=location.host, port=location.port, settings=settings)
            client.heartbeat()
        except store_errors() as error:
            raise MemoryUnavailable(
                f"Chroma server {location.host}:{location.port} cannot be reached: {error}"
            ) from None
        return Store(client, location)
    assert location.path is not None
    lock = hold_directory(location.path)
    try:
        client = chromadb.PersistentClient(path=str(location.path), settings=settings)
        client.list_collections()  # a damaged database fails here, not in the middle of a run
    except (ChromaError, OSError, ValueError) as error:
        lock.release()
        damaged = MemoryUnavailable(
            f"memory at {location.path} cannot be read ({error}); move the directory away "
            "to start a new memory"
        )
        _damaged[location] = damaged
        raise damaged from None
    _locks[location] = lock
    return Store(client, location)
