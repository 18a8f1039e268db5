"""A paper's open-access full text: what is read for it, and in place of what failed.

A scholarly result may name up to three things to read, best first: its full text as JATS
XML (`full_text_url`, Europe PMC's for an open-access PMC article), its PDF (`pdf_url`),
and its own page (`url`, unless `complete`: an abstract page has nothing more), which
comes before the PDF when there is a full text: it is then that article's page; an arXiv
paper names its HTML rendering after its PDF (`html_url`, cited there). The first
is read among the query's `fetch_top_n` pages; when it cannot be read as what it is (a
403, a dead link, a web page where the file should be, XML that is no article), the next
is read in its place, in a round of its own after the first reads, and the one after in
another when that fails too: a paper costs a query one page read as a web result does,
and a publisher that refuses robots its PDF often serves the article itself.

An article read as XML is shown as its abstract, then the sections that answer
the researcher's topic (the same for each of its queries, so a page shown once is not
shown again with other sections under the same link), cited at the article's page
(`url`), where that text is.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace

from deep_research.search import rendering
from deep_research.search.fetch import Page
from deep_research.search.pdf_pages import Finding, chosen_pages
from deep_research.search.types import SearchResult
from deep_research.text.extract import clip
from deep_research.text.urls import is_web_url

# Sections of one article a researcher reads per query, besides its abstract.
MAX_SECTIONS_SHOWN = 3
# Rounds of reads in place of failed ones: a paper names at most three things to read.
MAX_ROUNDS = 2


def to_read(result: SearchResult) -> list[str]:
    """What can be read for `result`, best first: its full text, its PDF, its own page,
    its HTML rendering; with a full text, its own page before its PDF, as that page is the
    full text's (an OpenAlex work's PMC copy: the same article, as a web page)."""
    own = result.url if is_web_url(result.url) and not result.complete else ""
    if result.full_text_url:
        return [url for url in (result.full_text_url, own, result.pdf_url) if url]
    return [url for url in (result.pdf_url, own, result.html_url) if url]


def read_as_meant(url: str, result: SearchResult, page: Page) -> bool:
    """Whether `page`, fetched from `url` for `result`, gave what `url` was read for."""
    if page.skipped:
        return False
    if url == result.full_text_url:  # a body besides the abstract (a scanned one has none)
        return len(page.sections) > 1
    if url == result.pdf_url:
        return bool(page.pdf_pages)
    if url == result.html_url:  # a short page is a notice that there is none, not the paper
        return rendering.is_paper(page)
    return bool(page.text)


def in_place_of_failed(
    findings: Iterable[Finding], pages: Mapping[str, Page], asked: Collection[str]
) -> list[str]:
    """What to read next for results whose reads so far failed: the first of `to_read`
    after them that is not read yet (none once one was read as meant). Only a result whose
    first was among what its query `asked` to read counts, once per URL asked (one past the
    query's pages to read does not, even when another result or query read that URL), so a
    query never reads more pages than its share; called again after those reads, it walks
    on to the next."""
    urls = []
    unspent = set(asked)  # each URL asked grants its reads in turn, to the first result
    for finding in findings:  # in rank order, the order the query's reads were chosen in
        choices = to_read(finding.result)
        if len(choices) < 2 or choices[0] not in unspent:
            continue
        unspent.discard(choices[0])
        if choices[0] in pages and (url := _next_to_read(choices, finding.result, pages)):
            urls.append(url)
    return list(dict.fromkeys(urls))


def _next_to_read(choices: list[str], result: SearchResult, pages: Mapping[str, Page]) -> str:
    for url in choices:
        page = pages.get(url)
        if page is None:
            return url
        if read_as_meant(url, result, page):
            return ""
    return ""


def unread_reason(url: str, result: SearchResult, page: Page) -> str:
    """Why `page` was not read as what `url` was fetched for (`read_as_meant` false)."""
    if page.skipped:
        return page.skipped
    if url == result.full_text_url:
        return "an article without a body" if page.sections else "not an article"
    if url == result.html_url:
        return rendering.why_not(page)
    return "not a PDF"


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


def by_section(findings: Sequence[Finding], about: str, limit: int) -> list[Finding]:
    """`findings` with each article's text made its abstract (the article's, else the
    API's) and the sections of its body that share most of the words of `about` (at most
    `MAX_SECTIONS_SHOWN`, in the article's order), within `limit` characters: a part
    shorter than its share is whole, and what it leaves goes to the others. The result's
    own text gives way to it, so what is shown is what the source holds."""
    chosen_for: list[Finding] = []
    for finding in findings:
        page = finding.page
        if page is None or len(page.sections) < 2:
            chosen_for.append(finding)
            continue
        opening, body = page.sections[0] or finding.result.content, page.sections[1:]
        numbers = chosen_pages(body, about, MAX_SECTIONS_SHOWN)
        if not numbers:  # no section with words (jats keeps none such): left as it was
            chosen_for.append(finding)
            continue
        parts = _fitted([opening, *(body[number - 1] for number in numbers)], limit)
        where = f"{_listed(numbers)} of the article's {len(body):,} sections"
        note = f"{where}; {page.note}" if page.note else where
        page = replace(page, text="\n\n".join(parts), note=note, sections=())
        result = replace(finding.result, content="")
        chosen_for.append(replace(finding, result=result, page=page))
    return chosen_for


def _fitted(parts: list[str], limit: int) -> list[str]:
    """The non-empty `parts` cut to fit `limit` characters with a blank line between
    them: the shortest whole first, each cut one at an equal share of what is left; a
    share too small to say anything drops its part."""
    parts = [part for part in parts if part]
    left = max(0, limit - 2 * (len(parts) - 1))
    fitted = list(parts)
    for count, index in enumerate(sorted(range(len(parts)), key=lambda i: len(parts[i]))):
        share = left // (len(parts) - count)
        part = parts[index]
        fitted[index] = part if len(part) <= share else clip(part, share) if share > 8 else ""
        left -= len(fitted[index])
    return [part for part in fitted if part]


def _listed(numbers: list[int]) -> str:
    named = [f"{number:,}" for number in numbers]
    if len(named) == 1:
        return f"section {named[0]}"
    return f"sections {', '.join(named[:-1])} and {named[-1]}"
