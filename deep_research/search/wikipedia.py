"""Wikipedia as a search provider: MediaWiki's search API, each article's lead as the result.

One request per query: `generator=search` finds the articles and `prop=extracts` gives
each one's lead section as plain text, the result's content. Its URL is the article, on
the wiki the endpoint belongs to (`https://en.wikipedia.org/w/api.php` gives
`https://en.wikipedia.org/wiki/Title`), built from the title rather than taken from the
answer; the article is then read like any result page, through the address guard, so the
researcher gets more than the lead.

Hand-written: the `wikipedia` package is unmaintained since 2014 and `Wikipedia-API` has
no search; both use requests, outside `api_call`'s deadline and byte cap.
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import Any
from urllib.parse import quote, urlsplit

from deep_research.search import api_call
from deep_research.search.types import MAX_TITLE_CHARS, Results, SearchError, SearchResult
from deep_research.text.wording import one_line

DEFAULT_API_URL = "https://en.wikipedia.org/w/api.php"
MAX_EXTRACT_CHARS = 6_000  # a lead section; the article itself is fetched as a page
MAX_QUERY_CHARS = 300  # CirrusSearch refuses longer queries
_ERROR_CODE = re.compile(r"[a-z0-9_-]{1,40}")


def article_base(api_url: str) -> str:
    """Where the wiki at `api_url` shows its articles: `{scheme}://{host}/wiki/`."""
    parts = urlsplit(api_url)
    return f"{parts.scheme}://{parts.netloc}/wiki/"


def article_url(base: str, title: str) -> str:
    """The article called `title`: spaces as underscores, everything else percent-encoded
    (a slash too, so no title can climb out of `/wiki/`)."""
    return base + quote(title.replace(" ", "_"), safe="_,()'!:*-.")


class WikipediaProvider:
    name = "wikipedia"
    max_concurrency = 4

    def __init__(self, api_url: str = DEFAULT_API_URL, timeout: float = api_call.TIMEOUT) -> None:
        self._url = api_url
        self._base = article_base(api_url)
        self._timeout = timeout

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        text = " ".join(query.split())[:MAX_QUERY_CHARS]
        if not text:
            return Results()
        params = {
            "action": "query",
            "format": "json",
            "formatversion": "2",
            "generator": "search",
            "gsrsearch": text,
            "gsrnamespace": "0",
            "gsrlimit": str(max_results),
            "prop": "extracts",
            "exintro": "1",
            "explaintext": "1",
            "exlimit": "max",
            "redirects": "1",
        }
        return await api_call.parsed(
            self.name,
            query,
            self._url,
            params,
            partial(parse_answer, query=query, base=self._base),
            accept="application/json",
            timeout=self._timeout,
            max_results=max_results,
        )


def parse_answer(body: bytes, query: str, base: str) -> Results:
    """The articles of a MediaWiki answer, in search order; a page without a title or an
    extract is counted malformed. Raises `SearchError` for an error or a non-JSON answer."""
    try:
        payload: Any = json.loads(body)
    except (ValueError, RecursionError) as error:  # bad bytes or JSON; arrays nested deeply
        raise SearchError(f"wikipedia answered something that is not JSON for {query!r}") from error
    if not isinstance(payload, dict):
        raise SearchError(f"wikipedia answered something that is not an answer for {query!r}")
    refusal = payload.get("error")
    if refusal is not None:
        code = refusal.get("code") if isinstance(refusal, dict) else None
        shown = code if isinstance(code, str) and _ERROR_CODE.fullmatch(code) else "unknown"
        raise SearchError(f"wikipedia refused {query!r} (error {shown})")
    found = payload.get("query")
    pages = found.get("pages") if isinstance(found, dict) else None
    if found is not None and not isinstance(pages, list):
        raise SearchError(f"wikipedia answered something that is not an answer for {query!r}")
    pages = pages or []  # no "query" at all: nothing matched
    ranked = sorted(
        (page for page in pages if isinstance(page, dict)),
        key=lambda page: _rank(page.get("index")),
    )
    kept = [article for page in ranked if (article := _article(page, base)) is not None]
    return Results(kept, malformed=len(pages) - len(kept))


def _rank(index: object) -> int:
    return index if isinstance(index, int) and not isinstance(index, bool) else 1_000_000


def _article(page: dict[str, Any], base: str) -> SearchResult | None:
    title, extract = page.get("title"), page.get("extract")
    if not isinstance(title, str) or not isinstance(extract, str):
        return None
    title = api_call.printable_line(title)
    extract = "".join(c if c.isprintable() or c == "\n" else " " for c in extract).strip()
    if not title or not extract or len(title) > MAX_TITLE_CHARS:
        return None  # MediaWiki titles are at most 255 bytes
    return SearchResult(
        url=article_url(base, title),
        title=title,
        content=one_line(extract, MAX_EXTRACT_CHARS),
    )
