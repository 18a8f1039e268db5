"""The knowledge store: one door in, `open_store()`.

`await open_store()` gives the process's `Store` (Chroma through langchain-chroma, MiniLM
embeddings shared with the relevance filter) at `MEMORY_DIR`, shared by the user's processes
through the Chroma server the first of them starts (`sharing`, `keeper`), or on the Chroma
server named by `CHROMA_HOST` / `CHROMA_PORT`; it raises `MemoryUnavailable` with a readable
reason when the store is locked by another process, damaged or unreachable, and callers go
on without memory. `close_stores()` lets go of the stores this process opened (their files,
locks and leases); one handed out before raises `MemoryUnavailable` after.
`sharing.stop(path)` stops a shared directory's server.
`Store.add / put / query / items / delete / clear` take a collection name:
`REPORTS_COLLECTION` and `PASSAGES_COLLECTION` hold past research, `LIBRARY_COLLECTION`
the user's documents.

`await list_chunks(collection)` gives the metadata of a collection's chunks without chromadb
where it can (`catalogue`: Chroma's SQLite catalogue, read-only), for `memory list` and
`library list`; `remembered_reports()` is the first of them.
`prepare(reports, sources, context)` embeds the pages a research report cites on a thread
of its own, before `remember` needs them, `prepare_part(text, context, question)` a part of
the final report as soon as it is written (the whole report and its question at
`finalize`), and `open_early()` opens a first run's store on one while the run goes on
(`preparing`).

Only `location` is imported with the package: the store needs chromadb (about 4 s to
import), and whether a store exists at all (`has_store`) must be cheap to ask.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from deep_research.memory.location import (
    Location,
    MemoryUnavailable,
    configured,
    configured_store,
    has_store,
)

if TYPE_CHECKING:
    from deep_research.memory.listing import Listing, list_chunks, remembered_reports
    from deep_research.memory.open import close_stores, open_store
    from deep_research.memory.preparing import open_early, prepare, prepare_part
    from deep_research.memory.research import PASSAGES_COLLECTION, REPORTS_COLLECTION
    from deep_research.memory.store import Hit, Metadata, Piece, Store, Where

LIBRARY_COLLECTION = "library-documents"

_LAZY = {
    "open_store": "deep_research.memory.open",
    "close_stores": "deep_research.memory.open",
    "prepare": "deep_research.memory.preparing",
    "prepare_part": "deep_research.memory.preparing",
    "open_early": "deep_research.memory.preparing",
    "PASSAGES_COLLECTION": "deep_research.memory.research",
    "REPORTS_COLLECTION": "deep_research.memory.listing",
    "Listing": "deep_research.memory.listing",
    "list_chunks": "deep_research.memory.listing",
    "remembered_reports": "deep_research.memory.listing",
    "Hit": "deep_research.memory.store",
    "Metadata": "deep_research.memory.store",
    "Piece": "deep_research.memory.store",
    "Store": "deep_research.memory.store",
    "Where": "deep_research.memory.store",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LIBRARY_COLLECTION",
    "PASSAGES_COLLECTION",
    "REPORTS_COLLECTION",
    "Hit",
    "Listing",
    "Location",
    "MemoryUnavailable",
    "Metadata",
    "Piece",
    "Store",
    "Where",
    "configured",
    "configured_store",
    "has_store",
    "open_early",
    "list_chunks",
    "open_store",
    "close_stores",
    "prepare",
    "prepare_part",
    "remembered_reports",
]
