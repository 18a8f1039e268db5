"""search/library.py: the library answers a query as a provider, over an in-process store."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.memory import LIBRARY_COLLECTION, MemoryUnavailable, Store
from deep_research.memory.store import Hit
from deep_research.search.library import LibraryProvider, document_title, document_url
from deep_research.search.types import SearchError


class FakeStore:
    def __init__(self, hits: list[Hit] | MemoryUnavailable) -> None:
        self.hits, self.asked = hits, []  # type: ignore[var-annotated]

    async def query(self, collection: str, text: str, *, k: int = 5, **_: Any) -> list[Hit]:
        self.asked.append((collection, text, k))
        if isinstance(self.hits, MemoryUnavailable):
            raise self.hits
        return self.hits[:k]


def provider(hits: list[Hit] | MemoryUnavailable) -> tuple[LibraryProvider, FakeStore]:
    store = FakeStore(hits)
    return LibraryProvider(cast(Store, store)), store


def hit(key: str, similarity: float = 0.5, **metadata: Any) -> Hit:
    return Hit(id=key, key=key, text=f"text of {key}", metadata=metadata, similarity=similarity)


def test_a_document_url_is_its_file_url_and_a_page_its_anchor(tmp_path: Path) -> None:
    path = tmp_path / "a b#c%.pdf"
    assert document_url(str(path)) == path.as_uri() and "#" not in document_url(str(path))[7:]
    assert document_url(str(path), 3) == path.as_uri() + "#page=3"
    assert document_url(str(path), 0) == document_url(str(path), -2) == path.as_uri()
    assert document_title("Report", 4) == "Report, page 4" and document_title("Report") == "Report"


async def test_hits_become_results_with_url_title_text_and_score(tmp_path: Path) -> None:
    pdf, note = str(tmp_path / "r.pdf"), str(tmp_path / "notes.md")
    library, store = provider([hit(pdf, 0.8, page=2, title="Study"), hit(note, 0.4)])
    results = await library.search("heat pumps", 5)
    assert store.asked == [(LIBRARY_COLLECTION, "heat pumps", 5)]
    assert [(r.url, r.title, r.score) for r in results] == [
        (document_url(pdf, 2), "Study, page 2", 0.8),
        (document_url(note), "notes.md", 0.4),
    ]
    assert results[0].content == f"text of {pdf}"
    assert library.name == LIBRARY_PROVIDER


@pytest.mark.parametrize("page", ["3", True, 2.5, None, [1]])
async def test_a_page_that_is_not_an_int_is_no_page(tmp_path: Path, page: object) -> None:
    path = str(tmp_path / "r.pdf")
    (result,) = await provider([hit(path, page=page, title="T")])[0].search("q", 5)
    assert result.url == document_url(path) and result.title == "T"


async def test_keys_another_client_wrote_are_never_turned_into_urls(tmp_path: Path) -> None:
    kept = str(tmp_path / "ok.txt")
    hostile = ["relative/path.txt", "https://evil.example/x", "../../etc/passwd", "", kept]
    results = await provider([hit(key) for key in hostile])[0].search("q", 10)
    assert [r.url for r in results] == [document_url(kept)]


async def test_an_unavailable_store_is_a_search_error_naming_the_library() -> None:
    library, _ = provider(MemoryUnavailable("locked by another process"))
    with pytest.raises(SearchError, match="library unavailable: locked by another process"):
        await library.search("q", 3)
