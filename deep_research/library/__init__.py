"""The user's documents as a source: one door in.

`add_paths(store, paths, on_file)` indexes files and folders (PDF pages, Markdown, text,
HTML, DOCX) into the knowledge store's `LIBRARY_COLLECTION`, skipping unchanged files by
content hash; `entries(store)` lists the documents and `remove_path(store, path)` removes
them. Searching them is the `library` search provider's (`search/library.py`).
"""

from deep_research.library.index import (
    AddReport,
    Entry,
    FileOutcome,
    add_paths,
    entries,
    remove_path,
)

__all__ = [
    "AddReport",
    "Entry",
    "FileOutcome",
    "add_paths",
    "entries",
    "remove_path",
]
