"""Memory of past research: published reports and the passages they cite.

A report is stored once per question: asked again (in any thread, in any folder), its
newer report replaces the older copy, and the entry keeps which threads researched it
(`threads`, newest first; `thread` is the one whose report is kept, the id recall shows).
The question is the first chunk (a new question is matched against earlier questions as
well as their reports), then the chunks of the report as read (`reading.py`: no link
targets, no Sources list), with the search provider it was made with: research from the
library alone recalls only reports made the same way, so no web-derived text reaches a
report promised to use documents only, and a library-only report and a web one on the same
question are two entries. Each cited page is stored once per URL, with the date it was
retrieved: read again from the web, it replaces its older copy; cited again from memory,
it is not stored again, and keeps its original date.

`forget(thread)` removes every report and page the thread stored, the entries a later
rerun took over included (that rerun was shown the earlier report, and may cite its pages).
A new question finds earlier reports again through `earlier.py`, their pages through
`pages.py`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.memory import chunks
from deep_research.memory.catalogue import CHUNK, KEY
from deep_research.memory.listing import (
    REPORTS_COLLECTION,
    RememberedReport,
    report_threads,
    threads_of,
)
from deep_research.memory.store import Hit, Piece, Scalar, Store
from deep_research.text import limits
from deep_research.text.urls import is_file_url, is_web_url, pdf_page_number

if TYPE_CHECKING:
    from deep_research.citations.registry import RegisteredSource

PASSAGES_COLLECTION = "research-passages"
EXCERPT_CHARS = 1500
STORED_QUESTION_CHARS = 500
# Enough candidates that grouping chunks by report or page still leaves a choice.
CANDIDATES = 40
DAY = 86_400.0
SEARCH_PROVIDER = "search_provider"  # a report's metadata: the provider it was made with
THREADS = "threads"  # metadata: a JSON list of the threads that stored the entry, newest first
MAX_THREADS = 20  # threads kept per entry (the oldest are dropped)
KEYS_PER_CALL = 100  # keys in one `$in` filter
# A page's metadata: the page of a web PDF it was (a `#page=N` alone is anyone's to write).
PDF_PAGE = "pdf_page"
PAGES = "pages"  # a report's metadata: the JSON list of the web pages it cites (`cited.py`)
MAX_PAGES = 50  # pages kept with one report (a report citing more keeps its first ones)
# What a stored retrieval date must look like: it is shown outside the data fences (the
# researcher's page note) and in the Sources list, which the citation check never reads.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class CitedPage:
    url: str
    title: str
    texts: list[str]
    retrieved: str = ""  # ISO date of the first retrieval; empty: retrieved in this run
    pdf_page: int = 0  # the page of a web PDF this is (its URL's `#page=N`); 0: none

    @classmethod
    def of(cls, source: RegisteredSource) -> CitedPage:
        """A page as the citation registry holds it: a recalled one keeps its first retrieval
        date, and `#page=N` is kept on a web PDF's pages alone."""
        url = source.url
        return cls(url, source.title, source.texts, source.retrieved_on, pdf_page_number(url))

    @property
    def stored(self) -> bool:
        """Whether `remember` stores it. A library document is the library's to keep: a copy
        here would outlive `library remove` and be cited after the file was taken out. A
        page cited from memory is there already, whole."""
        return not is_file_url(self.url) and not self.retrieved


@dataclass(frozen=True)
class RememberedPage:
    url: str
    title: str
    text: str
    retrieved: str
    similarity: float
    pdf_page: int = 0  # stored as a web PDF's page (`stored_pdf_page`); 0: the page itself


def stored_pdf_page(url: str, metadata: dict[str, Scalar]) -> int:
    """The PDF page a stored page is: its `#page=N` only when stored as that page of a PDF
    (`PDF_PAGE`, the number in its URL); 0 for any other page, whatever its URL says."""
    number = metadata.get(PDF_PAGE)
    if isinstance(number, bool) or not isinstance(number, int) or number <= 0:
        return 0
    return number if pdf_page_number(url) == number else 0


def pages_of(metadata: dict[str, Scalar]) -> list[str]:
    """The web pages a stored report cites; [] for one stored before, or a damaged entry
    (a shared store is outside input: only web addresses, at most `MAX_PAGES`)."""
    try:
        urls = json.loads(str(metadata.get(PAGES, "[]")))
    except ValueError:
        return []
    if not isinstance(urls, list):
        return []
    return [url for url in urls if isinstance(url, str) and is_web_url(url)][:MAX_PAGES]


def iso_date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).date().isoformat()


def question_key(question: str, search_provider: str) -> str:
    """One entry per question: case, spacing and closing punctuation aside, the same
    question asked again is the same key; a library-only report is kept apart from web ones."""
    normal = " ".join(question.casefold().split()).rstrip(" ?!.")
    made = "library" if search_provider == LIBRARY_PROVIDER else "web"
    digest = hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()
    return f"report|{made}|{digest[:32]}"


def page_key(url: str) -> str:
    return f"page|{url}"


async def remember(
    store: Store,
    *,
    thread_id: str,
    question: str,
    report: str,
    cited: Iterable[CitedPage],
    search_provider: str = "",
    now: float | None = None,
) -> int:
    """Store the report (made with `search_provider`) and the cited pages read in this run;
    returns how many pages. A report on the same question, and a page of the same URL,
    replace their older copies and keep the threads those came from."""
    now = time.time() if now is None else now
    question = stored_question(question)
    date = iso_date(now)
    meta: dict[str, Scalar] = {"thread": thread_id, "question": question, "date": date, "ts": now}
    meta[SEARCH_PROVIDER] = search_provider
    report_key = question_key(question, search_provider)
    cited = list(cited)
    kept = [page for page in cited if page.stored]
    # The lookups and the splits at once, then the two writes at once: `remember` is the
    # last step before the run ends. Splitting counts MiniLM tokens (and loads the
    # tokenizer once): never on the loop.
    page_keys = [page_key(page.url) for page in kept]
    earlier, earlier_pages, split, split_pages = await asyncio.gather(
        _threads_by_key(store, REPORTS_COLLECTION, [report_key]),
        _threads_by_key(store, PASSAGES_COLLECTION, page_keys),
        # Embedded as read, without link targets and the Sources list (`reading.py`).
        # The last use of their splits, which are let go (`chunks.kept_split`).
        asyncio.to_thread(lambda: chunks.report_chunks(report, last=True)),
        asyncio.to_thread(lambda: [page_chunks(page, last=True) for page in kept]),
    )
    excerpt = limits.cut(report, EXCERPT_CHARS)
    report_meta = {**meta, "excerpt": excerpt, THREADS: _threads(thread_id, earlier, report_key)}
    web = [url for url in dict.fromkeys(page.url for page in cited) if is_web_url(url)]
    report_meta[PAGES] = json.dumps(web[:MAX_PAGES])
    report_pieces = [Piece(question, report_meta)]
    report_pieces += [Piece(text, report_meta) for text in split]
    pages: dict[str, list[Piece]] = {}
    for page, key, page_pieces in zip(kept, page_keys, split_pages, strict=True):
        page_meta: dict[str, Scalar] = {
            **meta,
            "url": page.url,
            "title": page.title,
            "retrieved": date,
            THREADS: _threads(thread_id, earlier_pages, key),
        }
        if page.pdf_page:
            page_meta[PDF_PAGE] = page.pdf_page
        pages[key] = [Piece(piece, page_meta) for piece in page_pieces]
    # One write for every page: each Chroma call costs 10-15 ms. Both end before a failure
    # is raised, so `remember` says what failed once nothing is left to write.
    writes = {REPORTS_COLLECTION: {report_key: report_pieces}, PASSAGES_COLLECTION: pages}
    done = await asyncio.gather(
        *(store.put_many(name, items) for name, items in writes.items() if items),
        return_exceptions=True,
    )
    for failed in done:
        if isinstance(failed, BaseException):
            raise failed
    return len(pages)


def stored_question(question: str) -> str:
    """The question as a report's first piece holds it (and as it is embedded)."""
    return limits.cut(question.strip(), STORED_QUESTION_CHARS)


async def _threads_by_key(store: Store, collection: str, keys: list[str]) -> dict[str, list[str]]:
    """The threads already stored under each of `keys` (those stored at all)."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(keys), KEYS_PER_CALL):
        some = keys[start : start + KEYS_PER_CALL]
        where = {"$and": [{KEY: {"$in": some}}, {CHUNK: 0}]}
        for hit in await store.items(collection, where=where, texts=False):
            found[hit.key] = threads_of(hit.metadata)
    return found


def _threads(thread_id: str, earlier: dict[str, list[str]], key: str) -> str:
    """`thread_id` first, then the threads that stored `key` before, as JSON."""
    threads = [thread_id, *(t for t in earlier.get(key, []) if t != thread_id)]
    return json.dumps(threads[:MAX_THREADS])


def page_chunks(page: CitedPage, *, last: bool = False) -> list[str]:
    """The chunks a cited page is stored as (blocking: the splitter counts tokens); `last`:
    its split is let go (`chunks.kept_split`)."""
    return chunks.kept_split("\n\n".join(t for t in page.texts if t.strip()), last=last)


def valid_date(value: object) -> bool:
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def chunk_number(hit: Hit) -> int:
    number = hit.metadata.get("chunk")
    return number if isinstance(number, int) and not isinstance(number, bool) else 0


async def forget(store: Store, thread_id: str) -> int:
    """Delete every report and page `thread_id` stored, those a later rerun replaced
    included; returns how many chunks went."""
    gone = 0
    for collection in (REPORTS_COLLECTION, PASSAGES_COLLECTION):
        firsts = await store.items(collection, where={CHUNK: 0}, texts=False)
        keys = sorted({hit.key for hit in firsts if thread_id in threads_of(hit.metadata)})
        for start in range(0, len(keys), KEYS_PER_CALL):
            where = {KEY: {"$in": keys[start : start + KEYS_PER_CALL]}}
            gone += await store.delete(collection, where=where)
    return gone


async def remembered_threads(store: Store) -> list[RememberedReport]:
    """Every stored report (its thread, date, question and earlier threads), newest first."""
    hits = await store.items(REPORTS_COLLECTION, where={CHUNK: 0}, texts=False)
    return report_threads([dict(hit.metadata) for hit in hits])
