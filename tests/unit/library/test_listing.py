"""library.listing: chunks' metadata grouped into documents, by path."""

from __future__ import annotations

from deep_research.library.listing import Entry, entries_of


def test_chunks_group_into_documents_with_their_pages_counted() -> None:
    records: list[dict[str, str | int | float | bool]] = [
        {"key": "/d/b.pdf", "chunk": 0, "title": "B", "kind": "pdf", "page": 1, "added": "x"},
        {"key": "/d/b.pdf", "chunk": 1, "title": "B", "kind": "pdf", "page": 1, "added": "x"},
        {"key": "/d/b.pdf", "chunk": 2, "title": "B", "kind": "pdf", "page": 2, "added": "x"},
        {"key": "/d/a.md", "chunk": 0, "title": "A", "kind": "markdown", "page": 0, "added": "y"},
    ]
    assert entries_of(records) == [
        Entry("/d/a.md", "A", "markdown", chunks=1, pages=0, added="y"),
        Entry("/d/b.pdf", "B", "pdf", chunks=3, pages=2, added="x"),
    ]
    assert entries_of([]) == []
