"""A paper's open-access full text: what is read for it, and in place of what failed.

A scholarly result may name up to three things to read, best first: its full text as JATS
XML (`full_text_url`, Europe PMC's for an open-access PMC article), its PDF (`pdf_url`),
and its own page (`url`, unless `complete`: an abstract page has nothing more). The first
is read among the query's `fetch_top_n` pages; when it cannot be read as what it is (a
403, a dead link, a web page where the file should be, XML that is no article), the next
is read in its place, in a round of its own after the first reads: a paper costs a query
one page read as a web result does, and a publisher that refuses robots its PDF often
serves the article itself.

An article read as XML is shown as its title and abstract, then the sections that answer
the query, cited at the article's page (`url`), where that text is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from deep_research.search.fetch import Page
from deep_research.search.pdf_pages import Finding, chosen_pages
from deep_research.search.types import SearchResult
from deep_research.text.extract import clip
from deep_research.text.urls import is_web_url

# Sections of one article a researcher reads per query, besides its abstract.
MAX_SECTIONS_SHOWN = 3


def to_read(result: SearchResult) -> list[str]:
    """What can be read for `result`, best first: its full text, its PDF, its own page."""
    own = result.url if is_web_url(result.url) and not result.complete else ""
    return [url for url in (result.full_text_url, result.pdf_url, own) if url]


def read_as_meant(url: str, result: SearchResult, page: Page) -> bool:
    """Whether `page`, fetched from `url` for `result`, gave what `url` was read for."""
    if page.skipped:
        return False
    if url == result.full_text_url:  # a body besides the abstract (a scanned one has none)
        return len(page.sections) > 1
    if url == result.pdf_url:
        return bool(page.pdf_pages)
    return bool(page.text)


def in_place_of_failed(findings: Iterable[Finding], pages: Mapping[str, Page]) -> list[str]:
    """What to read for results whose first read failed: the next of `to_read`, when it is
    not read yet. A result whose first was not read (past the query's pages to read) gets
    none, so a query never reads more pages than its share."""
    urls = []
    for finding in findings:
        result = finding.result
        choices = to_read(result)
        first = pages.get(choices[0]) if choices else None
        if first is None or read_as_meant(choices[0], result, first) or len(choices) < 2:
            continue
        if choices[1] not in pages:
            urls.append(choices[1])
    return list(dict.fromkeys(urls))


def with_full_text(findings: Sequence[Finding], pages: Mapping[str, Page]) -> list[Finding]:
    """`findings` with each article read as XML given that text as its page."""
    found = []
    for finding in findings:
        url = finding.result.full_text_url
        page = pages.get(url) if url else None
        if page is not None and read_as_meant(url, finding.result, page):
            finding = replace(finding, page=page)
        found.append(finding)
    return found


def by_section(findings: Sequence[Finding], query: str) -> list[Finding]:
    """`findings` with each article's text made its opening (title and abstract) and the
    sections of its body that share most of the query's words (at most
    `MAX_SECTIONS_SHOWN`, in the article's order), within what the page held: the opening
    at most half of it, the sections sharing the rest. The result's own text (the
    abstract) is left out, as the opening holds it; an article with no body keeps its
    abstract alone."""
    chosen_for: list[Finding] = []
    for finding in findings:
        page = finding.page
        if page is None or not page.sections:
            chosen_for.append(finding)
            continue
        opening, body = page.sections[0], page.sections[1:]
        numbers = chosen_pages(body, query, MAX_SECTIONS_SHOWN)
        if not numbers:
            chosen_for.append(replace(finding, page=None))
            continue
        budget = max(8 * len(numbers), len(page.text))
        opening = clip(opening, budget // 2)
        share = (budget - len(opening)) // len(numbers) - 2  # 2: the blank line before each
        text = "\n\n".join([opening, *(clip(body[number - 1], share) for number in numbers)])
        where = f"{_listed(numbers)} of the article's {len(body):,} sections"
        note = f"{where}; {page.note}" if page.note else where
        result = replace(finding.result, content="")
        page = replace(page, text=text.strip(), note=note, sections=())
        chosen_for.append(replace(finding, result=result, page=page))
    return chosen_for


def _listed(numbers: list[int]) -> str:
    named = [f"{number:,}" for number in numbers]
    if len(named) == 1:
        return f"section {named[0]}"
    return f"sections {', '.join(named[:-1])} and {named[-1]}"
