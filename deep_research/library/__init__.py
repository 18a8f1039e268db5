"""The user's documents as a source: one door in.

`add_paths(store, paths, on_file)` indexes files and folders (PDF pages, Markdown, text,
HTML, DOCX) into the knowledge store's LIBRARY collection, skipping unchanged files by
content hash; `entries(store)` lists the documents and `remove_path(store, path)` removes
them. `LibraryProvider` answers searches from the stored chunks, with `file:` URLs that the
citation check accepts only when a search of this run returned them.
"""

from deep_research.library.index import AddReport, Entry, Outcome, add_paths, entries, remove_path
from deep_research.library.provider import NAME, LibraryProvider, document_url

__all__ = [
    "NAME",
    "AddReport",
    "Entry",
    "LibraryProvider",
    "Outcome",
    "add_paths",
    "document_url",
    "entries",
    "remove_path",
]
