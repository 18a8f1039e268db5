"""The user's documents as a source: one door in.

`add_paths(store, paths, on_file)` indexes files and folders (PDF pages, Markdown, text,
HTML, DOCX) into the knowledge store's `LIBRARY_COLLECTION`, skipping unchanged files by
content hash; `entries(store)` lists the documents and `remove_path(store, path)` removes
them; `entries_of(records)` groups chunks' metadata into documents (what `library list`
shows). Searching them is the `library` search provider's (`search/library.py`).

The names are imported on first use: the readers pull in trafilatura and lxml (about half
a second), which `library list` does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deep_research.library.index import (
        AddReport,
        FileOutcome,
        add_paths,
        entries,
        remove_path,
    )
    from deep_research.library.listing import Entry, entries_of

_LAZY = {
    "AddReport": "deep_research.library.index",
    "FileOutcome": "deep_research.library.index",
    "add_paths": "deep_research.library.index",
    "entries": "deep_research.library.index",
    "remove_path": "deep_research.library.index",
    "Entry": "deep_research.library.listing",
    "entries_of": "deep_research.library.listing",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AddReport",
    "Entry",
    "FileOutcome",
    "add_paths",
    "entries",
    "entries_of",
    "remove_path",
]
