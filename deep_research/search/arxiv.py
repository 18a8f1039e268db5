"""arXiv as a search provider: its Atom export API, each paper's abstract as the result.

A result's content is the abstract and its URL the paper's versioned abs page on arxiv.org,
where that abstract is shown (so a text fragment quoting it lands): built from the entry's
arXiv identifier, never taken from a link the feed gives, so a hostile answer can name no
other host. The page is not fetched (`complete`): the abstract is its text. The paper's
PDF (`pdf_url`) is read in its place, its best pages cited each at its page: on arxiv.org
(any of its hosts) built from the identifier too; a mirror's own PDF link (ARXIV_API_URL)
is fetched through the address guard like any result. When the PDF cannot be read (too
large, refused, text that cannot be extracted), the paper's HTML rendering (`html_url`,
`/html/<id>` beside a PDF at `/pdf/<id>`) is read in its place and cited there.

Hand-written rather than the `arxiv` package: that client is synchronous (requests, in a
thread per search), reads the whole answer with feedparser whatever its size, and waits
3 s between its own requests only; here the 3 s hold across every researcher of the
process (`min_interval`), and the answer goes through `api_call` (one deadline,
a byte cap, no redirects) and is parsed by defusedxml (no entity expansion, no DTD).
"""

from __future__ import annotations

import re
from datetime import date
from functools import partial
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from deep_research.search import api_call
from deep_research.search.types import (
    MAX_TITLE_CHARS,
    Results,
    SearchError,
    SearchResult,
    Years,
)
from deep_research.text.urls import checked_web_url
from deep_research.text.wording import one_line

DEFAULT_API_URL = "https://export.arxiv.org/api/query"
ABS_PAGE = "https://arxiv.org/abs/"
PDF_PAGE = "https://arxiv.org/pdf/"
MAX_LINKS = 20  # an entry links its abs page, its PDF and a DOI; more are not looked at
ARXIV_INTERVAL = 3.0  # seconds between requests to arXiv's own API
ATOM = "{http://www.w3.org/2005/Atom}"
# A new-style (2101.00001v2) or old-style (hep-th/9901001v1) identifier, ending the <id>.
ARXIV_ID = re.compile(r"(?:\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d{1,3})?")
_ID_IN_URL = re.compile(r"https?://arxiv\.org/abs/(?P<id>[^\s?#]+)")
# arXiv limits abstracts to 1,920 characters; more is not an abstract.
MAX_ABSTRACT_CHARS = 4_000
# Query words: letters and digits (arXiv's query syntax, quotes and colons never sent).
_WORD = re.compile(r"[^\W_]+(?:[-.][^\W_]+)*")
MAX_TERMS = 6
FIRST_YEAR = 1991  # arXiv's first papers
_STOPWORDS = frozenset(
    "a an and are as at be by for from how in is it of on or that the this to what when "
    "which who why with vs versus about does do did".split()
)


def search_query(query: str) -> str:
    """arXiv's `search_query` for free text: its significant words, all required."""
    words = [w for w in _WORD.findall(query.lower()) if w not in _STOPWORDS]
    terms = list(dict.fromkeys(words))[:MAX_TERMS]
    return " AND ".join(f"all:{term}" for term in terms)


def submitted(years: Years) -> str:
    """arXiv's clause for papers submitted within `years` (checked integers); arXiv began
    in 1991, and an open end is next year's last minute."""
    first = years.first if years.first is not None else FIRST_YEAR
    last = years.last if years.last is not None else date.today().year + 1
    return f"submittedDate:[{first:04d}01010000 TO {last:04d}12312359]"


class ArxivProvider:
    name = "arxiv"
    max_concurrency = 1  # arXiv asks for one connection at a time

    def __init__(self, api_url: str = DEFAULT_API_URL, timeout: float = api_call.TIMEOUT) -> None:
        self._url = api_url
        self._timeout = timeout
        # arXiv's API terms ask for 3 s between requests (`search/chain.py` waits them); a
        # mirror set in ARXIV_API_URL is the operator's, with its own rules.
        own = urlsplit(api_url).hostname == urlsplit(DEFAULT_API_URL).hostname
        self.min_interval = ARXIV_INTERVAL if own else 0.0

    async def search(
        self, query: str, max_results: int, *, years: Years | None = None
    ) -> list[SearchResult]:
        terms = search_query(query)
        if not terms:
            return Results()  # nothing to look for: no request spent
        if years is not None:
            terms = f"{terms} AND {submitted(years)}"
        params = {
            "search_query": terms,
            "start": "0",
            "max_results": str(max_results),
            "sortBy": "relevance",
        }
        return await api_call.parsed(
            self.name,
            query,
            self._url,
            params,
            partial(parse_feed, query=query),
            accept="application/atom+xml",
            timeout=self._timeout,
            max_results=max_results,
        )


def parse_feed(body: bytes, query: str) -> Results:
    """The papers of an Atom answer; an entry without an identifier, title or abstract is
    counted malformed. Raises `SearchError` for an answer that is not an Atom feed."""
    try:
        root = fromstring(body)
    except (ParseError, DefusedXmlException, ValueError) as error:
        raise SearchError(f"arxiv answered something that is not XML for {query!r}") from error
    if root.tag != f"{ATOM}feed":
        raise SearchError(f"arxiv answered something that is not an Atom feed for {query!r}")
    entries = root.findall(f"{ATOM}entry")
    kept = [paper for entry in entries if (paper := _paper(entry)) is not None]
    if not kept and any("/api/errors" in _text(entry, "id") for entry in entries):
        # The API answers a bad query with one "Error" entry; its words are not shown.
        raise SearchError(f"arxiv refused the query {query!r}")
    return Results(kept, malformed=len(entries) - len(kept))


def _paper(entry: Element) -> SearchResult | None:
    match = _ID_IN_URL.fullmatch(_text(entry, "id").strip())
    arxiv_id = match["id"] if match else ""
    title, abstract = (
        api_call.printable_line(_text(entry, "title")),
        api_call.printable_line(_text(entry, "summary")),
    )
    if not ARXIV_ID.fullmatch(arxiv_id) or not title or not abstract:
        return None
    authors = [api_call.printable_line(_text(a, "name")) for a in entry.findall(f"{ATOM}author")]
    authors = [a for a in authors if a]
    year = _text(entry, "published").strip()[:4]
    byline = ", ".join(
        part
        for part in (
            authors[0] + (" et al." if len(authors) > 1 else "") if authors else "",
            year if year.isdigit() else "",
        )
        if part
    )
    label = f"{title} ({byline})" if byline else title
    return SearchResult(
        url=ABS_PAGE + arxiv_id,
        title=one_line(label, MAX_TITLE_CHARS),
        content=one_line(abstract, MAX_ABSTRACT_CHARS),
        complete=True,
        pdf_url=(pdf := _pdf_url(entry, arxiv_id)),
        html_url=_html_url(pdf, arxiv_id),
    )


def _pdf_url(entry: Element, arxiv_id: str) -> str:
    """The paper's PDF: `<link title="pdf" type="application/pdf" href=...>`; on arxiv.org
    the entry's own paper's, over https; '' when the entry links none that is a web URL."""
    for link in entry.findall(f"{ATOM}link")[:MAX_LINKS]:
        if link.get("title") != "pdf" and link.get("type") != "application/pdf":
            continue
        href = checked_web_url(link.get("href"))
        if href is None:
            return ""
        host = urlsplit(href).hostname or ""
        on_arxiv = host == "arxiv.org" or host.endswith(".arxiv.org")  # export., www., ...
        return PDF_PAGE + arxiv_id if on_arxiv else href
    return ""


def _html_url(pdf: str, arxiv_id: str) -> str:
    """The paper's HTML rendering, beside a PDF at `/pdf/<id>` on arxiv.org or a mirror:
    `/html/<id>` on the same host, built from the identifier; '' for any other PDF link."""
    parts = urlsplit(pdf)
    if parts.path not in (f"/pdf/{arxiv_id}", f"/pdf/{arxiv_id}.pdf") or parts.query:
        return ""
    return f"{parts.scheme}://{parts.netloc}/html/{arxiv_id}"


def _text(element: Element, child: str) -> str:
    found = element.find(f"{ATOM}{child}")
    return "".join(found.itertext()) if found is not None else ""
