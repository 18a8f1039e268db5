"""A PDF found on the web, read as the few pages that answer a query.

The file is fetched once (the run's cache keys it without a page); each page chosen
becomes a finding of its own at `URL#page=N`, so it is a source of its own: a citation
opens the PDF at the page its passage is on, and the check reads that page's text alone.

A paper's open-access PDF (a scholarly result's `pdf_url`) is read the same way, beside
its abstract: the abstract stays cited at its own page, each PDF page chosen at its own.
When that PDF cannot be read as one, something else may be read in its place
(`search/full_text.py`): an arXiv paper's HTML rendering is then a finding beside its
abstract as its PDF would have been, cited at the rendering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import Field, replace
from typing import Any, ClassVar, Protocol, TypeVar

from deep_research.search import rendering
from deep_research.search.fetch import Page
from deep_research.search.types import SearchResult
from deep_research.text.urls import pdf_page_url
from deep_research.text.words import matched_words, word_set


class _Finding(Protocol):
    """What a search found (search/query.py's `Finding`, which imports this module)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def result(self) -> SearchResult: ...
    @property
    def page(self) -> Page | None: ...


Finding = TypeVar("Finding", bound=_Finding)

# Pages of one PDF a researcher reads per query: each costs a page excerpt of the turn's
# budget (search/render.py), so a long PDF cannot crowd out the other results.
MAX_PAGES_SHOWN = 3
MAX_QUERY_WORDS = 32  # a query is short; a longer one is cut, not looped over


def chosen_pages(pages: Sequence[str], query: str, limit: int = MAX_PAGES_SHOWN) -> list[int]:
    """The 1-based numbers of the (at most `limit`) pages sharing most of the query's words
    (`text.words`: no common English ones), in page order; the first page when none shares
    any. Pages without text never."""
    # In the query's order, so that which words count never depends on hashing.
    wanted = set(matched_words(query)[:MAX_QUERY_WORDS])
    scored = []
    for number, text in enumerate(pages, 1):
        if text.strip():  # each page's text is cut at `max_page_chars` already
            scored.append((-len(wanted & word_set(text)), number))
    best = sorted(scored)[:limit]
    if best and best[0][0] == 0:
        best = best[:1]  # no page shares a word: the first, a sample of the file
    else:  # the pages that share none are not worth a page excerpt of the turn
        best = [(score, number) for score, number in best if score < 0]
    return sorted(number for _, number in best)


def with_open_access(findings: Sequence[Finding], pages: Mapping[str, Page]) -> list[Finding]:
    """`findings` with, after each result whose open-access PDF was read, that PDF as a
    finding of its own (its pages chosen by `by_page`). A PDF that was not read as one
    (refused, failed, not a PDF) adds nothing: the abstract alone stays, and so does a PDF
    another result already is or names (two sources' records of one paper share it)."""
    found: list[Finding] = []
    shown = {finding.result.url for finding in findings}
    for finding in findings:
        found.append(finding)
        result = finding.result
        pdf = pages.get(result.pdf_url) if result.pdf_url else None
        if pdf is not None and not pdf.skipped and pdf.pdf_pages:
            if result.pdf_url in shown:
                continue  # (a result at its PDF itself is that PDF's pages already: `by_page`)
            url, page = result.pdf_url, pdf
        else:  # its HTML rendering, read in its place (search/full_text.py), if it was
            url = result.html_url
            read = pages.get(url) if url else None
            if read is None or not rendering.is_paper(read) or url in shown:
                continue
            page = replace(read, text=rendering.without_abstract(read.text, result.content))
        shown.add(url)
        # The paper's own finding: its text is the PDF's (or the rendering's), none of the
        # abstract's, cited where it is.
        paper = replace(result, url=url, content="", complete=False, pdf_url="", html_url="")
        found.append(replace(finding, result=paper, page=page))
    return found


def by_page(findings: Sequence[Finding], query: str) -> list[Finding]:
    """`findings` with each web PDF read replaced by its pages chosen for `query`."""
    paged: list[Finding] = []
    for finding in findings:
        page = finding.page
        if page is None or page.skipped or not page.pdf_pages:
            paged.append(finding)
            continue
        total = max(page.pdf_total, len(page.pdf_pages))  # the note says when not all were read
        for number in chosen_pages(page.pdf_pages, query):
            url = pdf_page_url(finding.result.url, number)
            where = f"page {number:,} of {total:,} of a PDF"
            note = f"{where}; {page.note}" if page.note else where
            # The search snippet is the whole file's, not this page's: left out, so a quote
            # is checked against the text of the page it is cited at.
            title = f"{finding.result.title}, page {number}"
            result = replace(finding.result, url=url, title=title, content="", pdf_page=number)
            text = page.pdf_pages[number - 1]
            paged.append(
                replace(
                    finding,
                    result=result,
                    page=replace(page, url=url, text=text, note=note, pdf_pages=(), pdf_total=0),
                )
            )
    return paged
