"""The run's source registry: normalised URL → what was retrieved there, and by whom."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from deep_research.citations.fragments import RetrievedText
from deep_research.state import Source
from deep_research.text.urls import (
    is_file_url,
    is_pdf,
    page_key,
    pdf_page_anchor,
    source_base,
    source_key,
    split_fragment,
)


@dataclass
class RegisteredSource:
    """One retrieved page. `number` is its place in retrieval order, stable for the run."""

    number: int
    url: str  # as retrieved, without fragment (but a PDF's page): what reports link to
    title: str
    texts: list[str] = field(default_factory=list)
    found_by: list[str] = field(default_factory=list)
    retrieved_on: str = ""  # ISO date, for a page recalled from memory; empty: this run

    @cached_property
    def retrieved(self) -> RetrievedText:
        return RetrievedText("\n\n".join(self.texts))

    @property
    def is_pdf(self) -> bool:
        # A page of a PDF (the registry keeps `#page=N` on those alone), or a PDF by its name.
        return bool(pdf_page_anchor(*split_fragment(self.url))) or is_pdf(self.url, self.title)


class SourceRegistry:
    """Sources keyed by normalised URL; two spellings of one page share one entry."""

    def __init__(self, sources: Iterable[Source] = ()) -> None:
        self._entries: dict[str, RegisteredSource] = {}
        # A PDF's first retrieved page (or the page itself), for a link without a page or at a
        # page that is not a source: `a.pdf`, `a.pdf#page=9`, `page.html#page=2`.
        self._documents: dict[str, RegisteredSource] = {}
        for source in sources:
            self.add(source)

    def add(self, source: Source) -> RegisteredSource:
        url = source_base(source["url"])
        if not is_file_url(url) and "pdf_page" not in source:
            url = split_fragment(url)[0]  # a web page's `#page=N`, but not a PDF's page
        key = source_key(source)
        entry = self._entries.get(key)
        retrieved_on = source.get("retrieved", "")
        if entry is None:
            entry = RegisteredSource(
                len(self._entries) + 1, url, source["title"] or url, retrieved_on=retrieved_on
            )
            self._entries[key] = entry
            self._documents.setdefault(page_key(split_fragment(url)[0]), entry)
        if source["content"] and source["content"] not in entry.texts:
            entry.texts.append(source["content"])
            entry.__dict__.pop("retrieved", None)  # the cached text is stale now
        if not retrieved_on:  # read in this run too: the text cited may be today's
            entry.retrieved_on = ""
        if source["found_by"] not in entry.found_by:
            entry.found_by.append(source["found_by"])
        return entry

    def lookup(self, url: str) -> RegisteredSource | None:
        """The source `url` leads to. A link to a PDF's page that was not retrieved (or to
        the file without a page) leads to the first page of it that was; a `#page=N` on a
        page that is not a PDF leads to that page."""
        found = self._entries.get(page_key(source_base(url)))
        return found or self._documents.get(page_key(split_fragment(url)[0]))

    def __iter__(self) -> Iterator[RegisteredSource]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)
