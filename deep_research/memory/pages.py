"""Stored pages read back: those answering a query, and those an earlier report cited.

`remembered_pages` answers a search from memory: the pages whose passages match a query.
`cited_pages` reaches the rest of what a report cited: a report is stored with the web
addresses it cites (`research.PAGES`), its pages whole beside it (`research.remember`), and
when `recall` finds the report again the run gets those pages back as read, with their first
retrieval date. A rerun that writes what the earlier report said then cites what it cited,
and the citation check finds each page and its passage.
"""

from __future__ import annotations

import time

from deep_research.memory.catalogue import KEY
from deep_research.memory.research import (
    CANDIDATES,
    DAY,
    KEYS_PER_CALL,
    PASSAGES_COLLECTION,
    RememberedPage,
    chunk_number,
    page_key,
    stored_pdf_page,
    valid_date,
)
from deep_research.memory.store import Hit, Store
from deep_research.text import limits
from deep_research.text.urls import is_web_url

# What a recalled report's pages may bring into a run: a store is outside input.
MAX_CITED_PAGES = 60
MAX_CHUNKS_PER_PAGE = 40  # a page is stored in MiniLM windows of about 1,000 characters
MAX_CITED_PAGE_CHARS = 40_000
TITLE_CHARS = 300


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
        and valid_date(hit.metadata.get("retrieved"))
    ]
    by_url: dict[str, list[Hit]] = {}
    for hit in hits:  # most similar first, so each page's first hit is its best
        by_url.setdefault(str(hit.metadata.get("url", "")), []).append(hit)
    pages = []
    for url, group in list(by_url.items())[:limit]:
        texts = list(dict.fromkeys(h.text for h in sorted(group, key=chunk_number)))
        first = group[0].metadata
        pages.append(
            RememberedPage(
                url=url,
                title=str(first.get("title", "")),
                text="\n\n".join(texts),
                retrieved=str(first.get("retrieved", "")),
                similarity=group[0].similarity,
                pdf_page=stored_pdf_page(url, first),
            )
        )
    return pages


async def cited_pages(
    store: Store, urls: list[str], *, max_age_days: float, now: float | None = None
) -> list[RememberedPage]:
    """The stored pages of `urls` younger than `max_age_days`, in `urls`' order: at most
    `MAX_CITED_PAGES`, each cut at `MAX_CITED_PAGE_CHARS` (a shared or damaged store may hold
    any number of chunks under one page)."""
    now = time.time() if now is None else now
    urls = list(dict.fromkeys(urls))[:MAX_CITED_PAGES]
    keys = [page_key(url) for url in urls]
    hits: list[Hit] = []
    for start in range(0, len(keys), KEYS_PER_CALL):
        some = keys[start : start + KEYS_PER_CALL]
        young = {"ts": {"$gte": now - max_age_days * DAY}}
        where = {"$and": [{KEY: {"$in": some}}, young]}
        limit = len(some) * MAX_CHUNKS_PER_PAGE
        hits += await store.items(PASSAGES_COLLECTION, where=where, limit=limit)
    by_url: dict[str, list[Hit]] = {}
    for hit in hits:
        by_url.setdefault(str(hit.metadata.get("url", "")), []).append(hit)
    pages = []
    for url in dict.fromkeys(urls):
        group = sorted(by_url.get(url, []), key=chunk_number)
        retrieved = group[0].metadata.get("retrieved") if group else None
        if not group or not valid_date(retrieved):
            continue
        whole = "\n\n".join(dict.fromkeys(hit.text for hit in group))
        text = limits.cut(whole, MAX_CITED_PAGE_CHARS)
        title = limits.cut(str(group[0].metadata.get("title", "")), TITLE_CHARS)
        pdf_page = stored_pdf_page(url, group[0].metadata)
        pages.append(RememberedPage(url, title, text, str(retrieved), 0.0, pdf_page))
    return pages
