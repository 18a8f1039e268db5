"""The library's documents as `library list` shows them, grouped from their chunks'
metadata; light (no reader, no chromadb), so a listing answers at once."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from deep_research.memory.catalogue import KEY, Record


@dataclass(frozen=True)
class Entry:
    """One document in the library, for `library list`."""

    path: str
    title: str
    kind: str
    chunks: int
    pages: int
    added: str


def entries_of(records: list[Record]) -> list[Entry]:
    """The documents whose chunks' metadata are `records`, by path."""
    chunks = defaultdict(list)
    for meta in records:
        chunks[str(meta.get(KEY, ""))].append(meta)
    listed = []
    for path, metadatas in sorted(chunks.items()):
        first = metadatas[0]
        pages = {m.get("page") for m in metadatas if m.get("page")}
        listed.append(
            Entry(
                path=path,
                title=str(first.get("title", "")),
                kind=str(first.get("kind", "")),
                chunks=len(metadatas),
                pages=len(pages),
                added=str(first.get("added", "")),
            )
        )
    return listed
