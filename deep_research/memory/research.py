"""Memory of past research: published reports and the passages they cite.

A report is stored under its thread and question: its question as the first chunk (a new
question is matched against earlier questions as well as their reports), then the chunks
of the report as read (`reading.py`: no link targets, no Sources list), with the search
provider it was made with: research from the library alone recalls only reports made the
same way, so no web-derived text reaches a report promised to use documents only. Each
cited page is stored as passages under the thread and URL, with the date it was first
retrieved: a page cited again from memory keeps its original date.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.memory import chunks
from deep_research.memory.listing import REPORTS_COLLECTION, report_threads, timestamp_of
from deep_research.memory.reading import reading_text
from deep_research.memory.store import Hit, Piece, Scalar, Store
from deep_research.text import limits
from deep_research.text.urls import is_file_url, is_web_url

PASSAGES_COLLECTION = "research-passages"
EXCERPT_CHARS = 1500
STORED_QUESTION_CHARS = 500
# Enough candidates that grouping chunks by report or page still leaves a choice.
CANDIDATES = 40
DAY = 86_400.0
SEARCH_PROVIDER = "search_provider"  # a report's metadata: the provider it was made with
# What a stored retrieval date must look like: it is shown outside the data fences (the
# researcher's page note) and in the Sources list, which the citation check never reads.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class CitedPage:
    url: str
    title: str
    texts: list[str]
    retrieved: str = ""  # ISO date of the first retrieval; empty: retrieved in this run


@dataclass(frozen=True)
class EarlierReport:
    thread_id: str
    question: str
    date: str
    similarity: float
    excerpt: str
    score: float  # similarity with the recency boost: the order shown, never the filter


@dataclass(frozen=True)
class RememberedPage:
    url: str
    title: str
    text: str
    retrieved: str
    similarity: float


def iso_date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).date().isoformat()


def _timestamp(date: str) -> float:
    return datetime.fromisoformat(date).replace(tzinfo=UTC).timestamp()


def recency_boost(age_seconds: float) -> float:
    """1 / (1 + age in days): yesterday's report counts half of today's, in ordering only."""
    return 1.0 / (1.0 + max(0.0, age_seconds) / DAY)


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
    """Store the report (made with `search_provider`) and its cited pages; returns how many
    pages. Re-storing replaces."""
    now = time.time() if now is None else now
    question = limits.cut(question.strip(), STORED_QUESTION_CHARS)
    date = iso_date(now)
    meta: dict[str, Scalar] = {"thread": thread_id, "question": question, "date": date, "ts": now}
    meta[SEARCH_PROVIDER] = search_provider
    report_key = f"{thread_id}:{hashlib.sha256(question.encode()).hexdigest()[:16]}"
    excerpt = limits.cut(report, EXCERPT_CHARS)
    report_pieces = [Piece(question, {**meta, "excerpt": excerpt})]
    # Embedded as read, without link targets and the Sources list (`reading.py`).
    # Splitting counts MiniLM tokens (and loads the tokenizer once): never on the loop.
    split = await asyncio.to_thread(lambda: chunks.split(reading_text(report)))
    report_pieces += [Piece(text, {**meta, "excerpt": excerpt}) for text in split]
    await store.put(REPORTS_COLLECTION, report_key, report_pieces)
    # A library document is the library's to keep: a copy here would outlive
    # `library remove` and be cited after the file was taken out.
    kept = [page for page in cited if not is_file_url(page.url)]
    split_pages = await asyncio.to_thread(lambda: [page_chunks(page) for page in kept])
    pages: dict[str, list[Piece]] = {}
    for page, page_pieces in zip(kept, split_pages, strict=True):
        retrieved = page.retrieved or date
        page_meta: dict[str, Scalar] = {
            **meta,
            "url": page.url,
            "title": page.title,
            "retrieved": retrieved,
            "ts": _timestamp(retrieved) if page.retrieved else now,
        }
        pages[f"{thread_id}|{page.url}"] = [Piece(piece, page_meta) for piece in page_pieces]
    if pages:  # one write for every page: each Chroma call costs 10-15 ms
        await store.put_many(PASSAGES_COLLECTION, pages)
    return len(pages)


def page_chunks(page: CitedPage) -> list[str]:
    """The chunks a cited page is stored as (blocking: the splitter counts tokens)."""
    return chunks.split("\n\n".join(t for t in page.texts if t.strip()))


async def similar_reports(
    store: Store,
    question: str,
    *,
    min_similarity: float,
    limit: int = 3,
    library_only: bool = False,
    now: float | None = None,
) -> list[EarlierReport]:
    """Earlier reports whose question or text reach `min_similarity`, most useful first;
    with `library_only`, only those made from the library alone (a report stored before
    the provider was, or by another client, may have used the web: it is left out)."""
    now = time.time() if now is None else now
    where = {SEARCH_PROVIDER: LIBRARY_PROVIDER} if library_only else None
    best: dict[str, Hit] = {}
    for hit in await store.query(REPORTS_COLLECTION, question, k=CANDIDATES, where=where):
        if hit.similarity >= min_similarity and (
            hit.key not in best or hit.similarity > best[hit.key].similarity
        ):
            best[hit.key] = hit
    found = []
    for hit in best.values():
        meta = hit.metadata
        similarity = hit.similarity
        found.append(
            EarlierReport(
                thread_id=str(meta.get("thread", "")),
                question=str(meta.get("question", "")),
                date=str(meta.get("date", "")),
                similarity=similarity,
                excerpt=str(meta.get("excerpt", "")),
                score=similarity * recency_boost(now - timestamp_of(meta)),
            )
        )
    found.sort(key=lambda report: -report.score)
    return found[:limit]


async def remembered_pages(
    store: Store,
    query: str,
    *,
    min_similarity: float,
    max_age_days: float,
    limit: int,
    now: float | None = None,
) -> list[RememberedPage]:
    """Stored pages with passages at least `min_similarity` to `query`, young enough."""
    now = time.time() if now is None else now
    young = {"ts": {"$gte": now - max_age_days * DAY}}
    # A shared or damaged store is outside input: only web pages (memory never keeps a
    # library document, so a `file:` URL here would be a path outside the library) with a
    # real retrieval date may answer.
    hits = [
        hit
        for hit in await store.query(PASSAGES_COLLECTION, query, k=CANDIDATES, where=young)
        if hit.similarity >= min_similarity
        and is_web_url(str(hit.metadata.get("url", "")))
        and _is_date(hit.metadata.get("retrieved"))
    ]
    by_url: dict[str, list[Hit]] = {}
    for hit in hits:  # most similar first, so each page's first hit is its best
        by_url.setdefault(str(hit.metadata.get("url", "")), []).append(hit)
    pages = []
    for url, group in list(by_url.items())[:limit]:
        texts = list(dict.fromkeys(h.text for h in sorted(group, key=_chunk_number)))
        first = group[0].metadata
        pages.append(
            RememberedPage(
                url=url,
                title=str(first.get("title", "")),
                text="\n\n".join(texts),
                retrieved=str(first.get("retrieved", "")),
                similarity=group[0].similarity,
            )
        )
    return pages


def _is_date(value: object) -> bool:
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _chunk_number(hit: Hit) -> int:
    number = hit.metadata.get("chunk")
    return number if isinstance(number, int) and not isinstance(number, bool) else 0


async def forget(store: Store, thread_id: str) -> int:
    """Delete a thread's reports and passages; returns how many chunks went."""
    where = {"thread": thread_id}
    return await store.delete(REPORTS_COLLECTION, where=where) + await store.delete(
        PASSAGES_COLLECTION, where=where
    )


async def remembered_threads(store: Store) -> list[tuple[str, str, str]]:
    """(thread, date, question) of every stored report, newest first."""
    hits = await store.items(REPORTS_COLLECTION, where={"chunk": 0}, texts=False)
    return report_threads([dict(hit.metadata) for hit in hits])
