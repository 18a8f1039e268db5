"""The library as a search provider: the user's documents answer a query like a web search.

A hit becomes a `SearchResult` whose URL is the document's `file:` URL (a PDF page's with
`#page=N`, so the citation opens there) and whose content is the stored chunk: the file is
never read again, so nothing outside what `library add` indexed is ever read. Relevance is
scored by the caller on the same MiniLM scale as web results, and the text reaches the model
inside the same data fences.
"""

from __future__ import annotations

from pathlib import Path

from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.memory import LIBRARY_COLLECTION, MemoryUnavailable, Store, open_store
from deep_research.search.types import SearchError, SearchResult


def document_url(path: str, page: int = 0) -> str:
    """The `file:` URL of a library document, at `page` when it has pages."""
    url = Path(path).as_uri()
    return f"{url}#page={page}" if page > 0 else url


def document_title(title: str, page: int = 0) -> str:
    return f"{title}, page {page}" if page > 0 else title


class LibraryProvider:
    """Searches the library in the knowledge store, opened on first use."""

    name: str = LIBRARY_PROVIDER
    max_concurrency = 4

    def __init__(self, store: Store | None = None) -> None:
        self._store = store

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        try:
            store = self._store or await open_store()
            self._store = store
            hits = await store.query(LIBRARY_COLLECTION, query, k=max_results)
        except MemoryUnavailable as error:
            raise SearchError(f"library unavailable: {error}") from error
        results = []
        for hit in hits:
            if not Path(hit.key).is_absolute():
                continue  # `library add` keys by resolved path; another client wrote this
            page = hit.metadata.get("page", 0)
            page = page if isinstance(page, int) and not isinstance(page, bool) else 0
            title = str(hit.metadata.get("title") or Path(hit.key).name)
            results.append(
                SearchResult(
                    url=document_url(hit.key, page),
                    title=document_title(title, page),
                    content=hit.text,
                    score=hit.similarity,
                )
            )
        return results
