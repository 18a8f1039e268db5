"""Adding, listing and removing documents in the library (the store's `LIBRARY_COLLECTION`).

A document is keyed by its resolved path; its chunks carry the file's SHA-256, so adding an
unchanged file again is recognised before it is parsed, and a changed one replaces its old
chunks (the store drops a shorter text's old tail).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from deep_research.library import scan
from deep_research.library.listing import Entry, entries_of
from deep_research.library.readers import Document, Unreadable
from deep_research.library.worker import Reader
from deep_research.memory import LIBRARY_COLLECTION, Metadata, Piece, Store
from deep_research.memory.chunks import split
from deep_research.memory.store import KEY


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file: "added", "updated", "unchanged", "unsupported",
    "oversized", "skipped" (a symlink out of the folder, not a regular file) or
    "unreadable", with details in `note`."""

    path: Path
    status: str
    note: str = ""
    chunks: int = 0


@dataclass
class AddReport:
    outcomes: list[FileOutcome] = field(default_factory=list)

    def count(self, *statuses: str) -> int:
        return sum(outcome.status in statuses for outcome in self.outcomes)


OnFile = Callable[[FileOutcome], None]


async def add_paths(store: Store, paths: Iterable[Path], on_file: OnFile) -> AddReport:
    """Index every supported file named in `paths` or under a folder there."""
    report = AddReport()
    async with Reader() as reader:  # each file read in a child bounded in time and memory
        for candidate in await asyncio.to_thread(lambda: list(scan.candidates(list(paths)))):
            outcome = await _add_one(store, reader, candidate)
            report.outcomes.append(outcome)
            on_file(outcome)
    return report


async def _add_one(store: Store, reader: Reader, candidate: scan.Candidate) -> FileOutcome:
    path = candidate.path
    if candidate.status:
        return FileOutcome(path, candidate.status, candidate.problem)
    try:
        loaded = await asyncio.to_thread(scan.load, path)
    except (OSError, ValueError) as error:
        note = str(error) if isinstance(error, ValueError) else type(error).__name__
        return FileOutcome(path, "unreadable", note)
    known = await store.items(LIBRARY_COLLECTION, where={KEY: str(path)}, limit=1, texts=False)
    if known and known[0].metadata.get("sha256") == loaded.sha256:
        return FileOutcome(path, "unchanged")
    try:
        document = await reader.read(path, loaded.raw)
    except Unreadable as error:
        return FileOutcome(path, "unreadable", str(error))
    pieces = await asyncio.to_thread(_pieces, document, loaded.sha256)
    count = await store.put(LIBRARY_COLLECTION, str(path), pieces)
    return FileOutcome(path, "updated" if known else "added", document.cut, count)


def _pieces(document: Document, sha256: str) -> list[Piece]:
    """The document's chunks: each within one MiniLM window and one PDF page (blocking)."""
    added = datetime.now(UTC).strftime("%Y-%m-%d")
    pieces: list[Piece] = []
    for section in document.sections:
        metadata: Metadata = {
            "title": document.title,
            "kind": document.kind,
            "page": section.page,
            "sha256": sha256,
            "added": added,
        }
        pieces.extend(Piece(text, metadata) for text in split(section.text))
    return pieces


async def entries(store: Store) -> list[Entry]:
    """Every document in the library, by path."""
    hits = await store.items(LIBRARY_COLLECTION, texts=False)
    return entries_of([dict(hit.metadata) for hit in hits])


async def remove_path(store: Store, given: Path) -> list[str]:
    """Remove the document at `given`, or every document under it when it names a folder
    (which may be gone from disk); returns the paths removed."""
    target = given.expanduser().resolve(strict=False)
    keys = {entry.path for entry in await entries(store)}
    folder = str(target).rstrip("/") + "/"
    gone = sorted(key for key in keys if key == str(target) or key.startswith(folder))
    for key in gone:
        await store.delete(LIBRARY_COLLECTION, key=key)
    return gone
