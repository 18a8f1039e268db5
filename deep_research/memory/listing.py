"""What the store holds, for a listing: read from Chroma's catalogue when the store is a
local directory this process can read that way (no chromadb import, no directory lock),
else through chromadb (a Chroma server, or a catalogue `catalogue.py` does not know)."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple

from deep_research.errors import OldDataError
from deep_research.memory import catalogue
from deep_research.memory.catalogue import Record, Scalar
from deep_research.memory.location import Location, MemoryUnavailable, configured, has_store

REPORTS_COLLECTION = "research-reports"
MAX_THREADS_READ = 50  # threads read from one entry's list (a shared store is outside input)


class RememberedReport(NamedTuple):
    """One stored report: the thread whose report is kept, its date and question, and
    the threads that researched the same question before (newest first)."""

    thread: str
    date: str
    question: str
    earlier: tuple[str, ...] = ()


@dataclass(frozen=True)
class Listing:
    """The metadata of a collection's chunks, where they were read, and by what."""

    where: str
    records: list[Record]
    read_by: Literal["catalogue", "chromadb"]


async def list_chunks(
    collection: str, equal: tuple[str, Scalar] | None = None, location: Location | None = None
) -> Listing:
    """Every chunk's metadata in `collection` (where field `equal[0]` is `equal[1]`)."""
    # `configured()` asks for the working directory and the disk: never on the loop.
    place = await asyncio.to_thread(configured) if location is None else location
    if place.path is not None:
        if not await asyncio.to_thread(has_store, place):  # nothing stored yet
            return Listing(place.describe(), [], "catalogue")
        records = await asyncio.to_thread(catalogue.read, place.path, collection, equal)
        if records is not None:
            return Listing(place.describe(), records, "catalogue")
    from deep_research.memory.open import open_store  # chromadb: seconds to import

    store = await open_store(place)
    where = None if equal is None else {equal[0]: equal[1]}
    hits = await store.items(collection, where=where, texts=False)
    return Listing(store.where, [dict(hit.metadata) for hit in hits], "chromadb")


def nothing_remembered(location: Location | None = None, wait: float | None = None) -> bool:
    """Whether a local store (the configured one, unless given) surely holds no report (none
    made, or a first run that failed after its store was opened): then `recall` has nothing
    to open it for. False for a server, a catalogue this reader does not know, or one
    another process's write holds past `wait` seconds (`catalogue.read`). Blocking: the
    environment's location, SQLite read-only."""
    location = location or configured()
    if location.host is not None or location.path is None:
        return False
    if not has_store(location):
        return True
    # One report's first chunk is enough to know: not all of them, on every search step.
    first = catalogue.read(
        location.path, REPORTS_COLLECTION, (catalogue.CHUNK, 0), first=True, wait=wait
    )
    return first == []


def timestamp_of(meta: Mapping[str, Scalar]) -> float:
    """A stored chunk's time; 0 (the oldest) when another client wrote something else."""
    value = meta.get("ts")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) else 0.0


class OldMemoryError(OldDataError, MemoryUnavailable):
    """A memory entry without its `threads` list; runs go on without the memory."""


def threads_of(meta: Mapping[str, Scalar]) -> list[str]:
    """The threads that stored an entry, newest first: its `thread`, then its `threads`
    list (a JSON list of strings); a list another client wrote in another shape is ignored."""
    if "threads" not in meta:
        raise OldMemoryError(
            f"the memory entry of thread {str(meta.get('thread'))[:64]!r}",
            "`deep-research memory clear --yes` forgets it, with everything remembered",
        )
    thread = meta.get("thread")
    threads = [thread] if isinstance(thread, str) and thread else []
    try:
        listed = json.loads(str(meta["threads"]))
    except json.JSONDecodeError:
        listed = []
    if isinstance(listed, list):
        threads += [t for t in listed[:MAX_THREADS_READ] if isinstance(t, str) and t]
    return list(dict.fromkeys(threads))


def report_threads(records: list[Record]) -> list[RememberedReport]:
    """Every report among the first chunks in `records`, newest first; one row per thread
    and question (reports stored before one entry per question may repeat a question)."""
    seen: dict[tuple[str, str], tuple[RememberedReport, float]] = {}
    for meta in records:
        thread, *earlier = threads_of(meta) or [""]
        question = str(meta.get("question", ""))
        row = RememberedReport(thread, str(meta.get("date", "")), question, tuple(earlier))
        seen[(thread, question)] = (row, timestamp_of(meta))
    return [row for row, _ in sorted(seen.values(), key=lambda pair: -pair[1])]


async def remembered_reports(
    location: Location | None = None,
) -> tuple[str, list[RememberedReport]]:
    """Where the memory is, and every report it holds, newest first."""
    listed = await list_chunks(REPORTS_COLLECTION, ("chunk", 0), location)
    return listed.where, report_threads(listed.records)
