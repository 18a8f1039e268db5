"""Opening the store once per process: a Chroma server, a shared directory, or a locked one.

A directory is shared by default (`Location.shared`): the process attaches to the Chroma
server its keeper runs (`memory/sharing.py`), starting one if none runs. When sharing cannot
start, the process says why once, on stderr, and opens the directory itself, alone.

A run opens the store several times (recall, each researcher's memory lookup and library
search, remembering): a server that cannot be reached is remembered, for the thread being
run, as unreachable, so a run whose memory server hangs pays one bounded attempt, not seven.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

import httpx
from filelock import FileLock
from langgraph.config import get_config

from deep_research.config.endpoints import read_endpoints
from deep_research.config.private import private_directory
from deep_research.embedding import loader
from deep_research.embedding.files import WeightsUnavailable
from deep_research.memory import chroma
from deep_research.memory.location import Location, MemoryUnavailable, configured, hold_directory
from deep_research.memory.record import HOST, TOKEN_NAME, read_token
from deep_research.memory.server import ServerSilent, bounded_client, with_token
from deep_research.memory.store import Store, store_errors

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pathlib import Path

    from chromadb.api import ClientAPI
    from chromadb.config import Settings

_stores: dict[Location, Store] = {}
# The directory locks this process holds: kept as long as its store is (`close_stores`).
_locks: dict[Location, FileLock] = {}
# The leases on shared directories' servers (`server.users` descriptors), for the same life.
_leases: dict[Location, int] = {}
_said: set[Location] = set()  # directories whose sharing failed: the reason is said once
# Stores found damaged: their first, readable error is repeated rather than each of a run's
# opens trying again, until `close_stores` (the user may have moved the directory away).
_damaged: dict[Location, MemoryUnavailable] = {}
_open_lock = threading.Lock()
# How many times `close_stores` ran: an open begun on a background thread before a close
# (`preparing`) is refused rather than holding the directory again after it.
_closes = 0
# Servers found unreachable, by location and thread: the rest of that thread's run goes on
# without memory at once. Forgotten after `UNREACHABLE_SECONDS` (a thread resumed later
# tries again) and beyond `MAX_UNREACHABLE` entries, the oldest first.
_unreachable: OrderedDict[tuple[Location, str], tuple[float, MemoryUnavailable]] = OrderedDict()
UNREACHABLE_SECONDS = 3600.0
# A token refused: CHROMA_TOKEN is not the server's, or a keeper's file was replaced.
REFUSED_ADVICE = (
    "with CHROMA_HOST, set CHROMA_TOKEN to the server's token; for the shared MEMORY_DIR, "
    "`deep-research memory stop` and run again starts a keeper with a new token"
)
MAX_UNREACHABLE = 1000


async def open_store(location: Location | None = None) -> Store:
    """The store at `location` (default: the environment's), or `MemoryUnavailable`."""
    return await asyncio.to_thread(open_store_blocking, location)


def open_store_blocking(location: Location | None = None, *, begun_at: int | None = None) -> Store:
    """`open_store` on this thread; with `begun_at` (`closes()` when the caller began),
    refused once the stores were closed since."""
    # `configured()` asks for the working directory: a blocking call, so never on the loop.
    location = location or configured()
    key = (location, _thread())
    _raise_if_unreachable(key)  # before the lock, which another thread's attempt may hold
    with _open_lock:
        if begun_at is not None and begun_at != _closes:
            raise MemoryUnavailable("memory was closed in this process after this open began")
        if location in _damaged:
            raise _damaged[location]
        _raise_if_unreachable(key)
        if location not in _stores:
            _needs_the_model()  # not remembered as the server's failure: it is this machine's
            try:
                _stores[location] = _connect(location)
            except MemoryUnavailable as error:
                if location.host is not None:
                    _unreachable[key] = (time.monotonic(), error)
                    while len(_unreachable) > MAX_UNREACHABLE:
                        _unreachable.popitem(last=False)
                raise
        return _stores[location]


def close_stores() -> None:
    """Let go of every store this process opened: its client, its directory's lock, its
    lease on a shared directory's server (whose keeper then stops when idle), and what was
    remembered of damaged or unreachable stores. The next `open_store` opens again; a store
    handed out before raises `MemoryUnavailable`. For a notebook done with memory, and for
    the tests, which open a store in each test's own directory. Every one is let go of even
    when one fails to close; the first failure is raised after."""
    global _closes
    failures: list[Exception] = []
    with _open_lock:
        _closes += 1
        _damaged.clear()
        _unreachable.clear()
        while _stores:
            _let_go(_stores.popitem()[1].close, failures)
        while _locks:
            _let_go(_locks.popitem()[1].release, failures)
        while _leases:
            _let_go(functools.partial(os.close, _leases.popitem()[1]), failures)
    if failures:
        raise failures[0]


def closes() -> int:
    """How many times this process closed its stores (`close_stores`)."""
    return _closes


def _let_go(close: Callable[[], object], failures: list[Exception]) -> None:
    try:
        close()
    except Exception as error:  # noqa: BLE001  # the rest are still let go of; raised after
        failures.append(error)


def _thread() -> str:
    """The graph thread this call is part of ("" outside a graph run)."""
    try:
        return str(get_config().get("configurable", {}).get("thread_id") or "")
    except RuntimeError:  # not called from inside a run
        return ""


def _raise_if_unreachable(key: tuple[Location, str]) -> None:
    found = _unreachable.get(key)
    if found is not None and time.monotonic() - found[0] < UNREACHABLE_SECONDS:
        raise found[1]


def _needs_the_model() -> None:
    """Memory embeds with MiniLM: it uses the model on this machine, never fetches it."""
    try:
        loader.weights()
    except WeightsUnavailable as error:
        raise MemoryUnavailable(f"memory needs the relevance model: {error}") from None


def _connect(location: Location) -> Store:
    chromadb = chroma.load()  # seconds to import: only when a store is opened
    from chromadb.config import Settings
    from chromadb.errors import ChromaError

    settings = Settings(anonymized_telemetry=False)
    if location.host is not None:
        token = read_endpoints().chroma_token  # never in `Location`: its repr is logged
        if token is not None:
            settings = with_token(settings, token.get_secret_value())
        try:
            client = bounded_client(location.host, location.port, settings)
            client.heartbeat()
        except store_errors() + (TypeError,) as error:
            raise MemoryUnavailable(
                f"Chroma server {location.host}:{location.port} cannot be reached: {_reason(error)}"
            ) from None
        return Store(client, location)
    assert location.path is not None
    if location.shared:
        shared = _attach(location, settings)
        if shared is not None:
            return shared
    lock = hold_directory(location.path)
    embedded: ClientAPI | None = None
    try:
        embedded = chromadb.PersistentClient(path=str(location.path), settings=settings)
        embedded.list_collections()  # a damaged database fails here, not in the middle of a run
        private_directory(location.path)  # the catalogue Chroma just made: the user's only
    except (ChromaError, OSError, ValueError) as error:
        if embedded is not None:  # its files, not kept open by a store never used
            with contextlib.suppress(Exception):
                Store(embedded, location).close()
        _forget_failed_system(location.path)
        lock.release()
        damaged = MemoryUnavailable(
            f"memory at {location.path} cannot be read ({error}); move the directory away "
            "to start a new memory"
        )
        _damaged[location] = damaged
        raise damaged from None
    _locks[location] = lock
    return Store(embedded, location)


def _forget_failed_system(path: Path) -> None:
    """chromadb keeps a system that failed to start for its path and hands it to the next
    client there, which fails with an unrelated AttributeError: forgotten, the path (moved
    away and made again, say) opens afresh."""
    from chromadb.api.shared_system_client import SharedSystemClient

    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    if isinstance(systems, dict):
        systems.pop(str(path), None)


def _reason(error: BaseException) -> str:
    """What went wrong; a timeout chromadb rewrote as "Are you sure it exists?" says so."""
    from chromadb.errors import AuthorizationError, ChromaAuthError

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ServerSilent):
            return str(cause)
        if isinstance(cause, AuthorizationError | ChromaAuthError):
            return f"it refused the token ({cause}); {REFUSED_ADVICE}"
        if isinstance(cause, httpx.TimeoutException):
            return f"it did not answer in time ({cause})"
        cause = cause.__cause__ or cause.__context__
    return str(error)


def _attach(location: Location, settings: Settings) -> Store | None:
    """The store through the directory's shared server, or None (said once) to open it
    embedded; `MemoryUnavailable` when the directory cannot be used either way."""
    from deep_research.memory import sharing

    assert location.path is not None
    try:
        attached = sharing.attach(location.path, read_endpoints().memory_server_idle)
    except sharing.CannotShare as error:
        if location not in _said:
            _said.add(location)
            log.warning("memory at %s is not shared (%s); opened alone", location.path, error)
        return None
    token = read_token(location.path)
    if token is None:
        os.close(attached.lease)
        raise MemoryUnavailable(
            f"memory server for {location.path} ({attached.record.describe()}) has no "
            f"readable token ({location.path / TOKEN_NAME}); stop it with `deep-research "
            "memory stop` and run again: the next keeper writes a new one"
        )
    try:
        client = bounded_client(HOST, attached.record.port, with_token(settings, token))
    except store_errors() + (TypeError,) as error:
        os.close(attached.lease)  # not used: the keeper may stop when idle
        # Its keeper holds the directory: opening it embedded would only be refused.
        raise MemoryUnavailable(
            f"memory server for {location.path} ({attached.record.describe()}) did not "
            f"answer: {_reason(error)}"
        ) from None
    _leases[location] = attached.lease
    return Store(client, location)
