"""The knowledge store: one door in, `open_store()`.

`await open_store()` gives the process's `Store` (Chroma through langchain-chroma, MiniLM
embeddings shared with the relevance filter) at `MEMORY_DIR`, or on the Chroma server named
by `CHROMA_HOST` / `CHROMA_PORT`; it raises `MemoryUnavailable` with a readable reason when
the store is locked by another process, damaged or unreachable, and callers go on without
memory. `Store.add / put / query / items / delete / clear` take a collection name:
`REPORTS` and `PASSAGES` hold past research, `LIBRARY` the user's documents.
"""

from deep_research.memory.location import Location, MemoryUnavailable, configured
from deep_research.memory.open import open_store
from deep_research.memory.research import PASSAGES, REPORTS
from deep_research.memory.store import Hit, Metadata, Piece, Store, Where

LIBRARY = "library-documents"

__all__ = [
    "LIBRARY",
    "PASSAGES",
    "REPORTS",
    "Hit",
    "Location",
    "MemoryUnavailable",
    "Metadata",
    "Piece",
    "Store",
    "Where",
    "configured",
    "open_store",
]
