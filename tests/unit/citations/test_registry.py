"""citations.registry: one numbered entry per page, whatever its spelling, with all its texts."""

from __future__ import annotations

from deep_research.citations.registry import SourceRegistry
from deep_research.state import Source


def _source(url: str, content: str = "text", found_by: str = "q1", **extra: str) -> Source:
    source = Source(url=url, title=extra.pop("title", ""), content=content, found_by=found_by)
    source.update(extra)  # type: ignore[typeddict-item]
    return source


def test_two_spellings_of_one_page_share_one_numbered_entry() -> None:
    registry = SourceRegistry(
        [
            _source("https://Example.com:443/a/#intro", "first", "q1", title="A"),
            _source("https://example.com/a?utm_source=x", "second", "q2"),
            _source("https://other.example/b", "other", "q1"),
        ]
    )
    assert len(registry) == 2
    first, second = registry
    assert (first.number, second.number) == (1, 2)
    assert first.url == "https://Example.com:443/a/"  # as retrieved, without its fragment
    assert first.title == "A" and first.texts == ["first", "second"]
    assert first.found_by == ["q1", "q2"]
    assert registry.lookup("https://example.com/a#other") is first
    assert registry.lookup("https://example.com/c") is None


def test_retrieved_text_follows_texts_added_later() -> None:
    registry = SourceRegistry([_source("https://a.example/", "alpha")])
    entry = registry.lookup("https://a.example/")
    assert entry is not None and "alpha" in entry.retrieved.text
    registry.add(_source("https://a.example/", "beta"))
    registry.add(_source("https://a.example/", "beta"))  # the same text is kept once
    assert entry.texts == ["alpha", "beta"] and "beta" in entry.retrieved.text


def test_a_title_defaults_to_the_url_and_pdfs_are_known() -> None:
    registry = SourceRegistry(
        [_source("https://a.example/r.PDF"), _source("https://b.example/x", title="[PDF] Report")]
    )
    pdf, tagged = registry
    assert pdf.title == "https://a.example/r.PDF" and pdf.is_pdf and tagged.is_pdf
    [guide] = SourceRegistry([_source("https://c.example/pdf-guide")])
    assert not guide.is_pdf


def test_a_page_recalled_from_memory_keeps_its_date_until_read_again() -> None:
    registry = SourceRegistry([_source("https://a.example/", retrieved="2025-01-02")])
    [entry] = registry
    assert entry.retrieved_on == "2025-01-02"
    registry.add(_source("https://a.example/", "fresh"))
    assert entry.retrieved_on == ""  # read in this run too


def test_each_page_of_a_library_pdf_is_its_own_source() -> None:
    doc = "file:///home/u/library/report.pdf"
    registry = SourceRegistry(
        [_source(f"{doc}#page=3", "page three"), _source(f"{doc}#page=5", "page five")]
    )
    three, five = registry
    assert three.url == f"{doc}#page=3" and five.url == f"{doc}#page=5"
    assert registry.lookup(f"{doc}#page=5") is five
    # A page never retrieved, or the file itself, leads to the first page retrieved.
    assert registry.lookup(f"{doc}#page=9") is three
    assert registry.lookup(doc) is three
    assert registry.lookup("file:///home/u/library/other.pdf") is None


def test_fragments_of_web_pages_are_not_sources_of_their_own() -> None:
    registry = SourceRegistry(
        [_source("https://a.example/p#page=2"), _source("https://a.example/p")]
    )
    assert len(registry) == 1
    (page,) = registry
    assert page.url == "https://a.example/p"
    assert registry.lookup("https://a.example/p#page=7") is page  # no source of its own


def test_each_page_of_a_web_pdf_is_its_own_source() -> None:
    pdf = "https://a.example/files/report.pdf"
    registry = SourceRegistry(
        [
            _source(f"{pdf}#page=2", "page two", pdf_page=2),  # type: ignore[arg-type]
            _source(f"{pdf}#page=3", "page three", pdf_page=3),  # type: ignore[arg-type]
        ]
    )
    two, three = registry
    assert two.url == f"{pdf}#page=2" and two.texts == ["page two"]
    assert three.url == f"{pdf}#page=3" and three.texts == ["page three"]
    assert registry.lookup(f"{pdf}#page=3") is three
    # The file without a page, or at a page never retrieved: the first page retrieved.
    assert registry.lookup(pdf) is two and registry.lookup(f"{pdf}#page=9") is two
    assert registry.lookup(f"{pdf}#page=3:~:text=page") is three
    assert registry.lookup("https://a.example/files/other.pdf#page=2") is None
