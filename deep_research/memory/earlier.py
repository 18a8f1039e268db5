"""Earlier reports a new question finds in memory: similar enough by its question or its
text, ordered by that similarity and how recent they are.

`nodes.recall` shows them (with the pages they cite, `memory.pages`) before the research
starts; the threshold is on raw similarity, the recency boost orders only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.memory.listing import REPORTS_COLLECTION, timestamp_of
from deep_research.memory.research import CANDIDATES, DAY, SEARCH_PROVIDER, pages_of
from deep_research.memory.store import Hit, Store


@dataclass(frozen=True)
class EarlierReport:
    thread_id: str
    question: str
    date: str
    similarity: float
    excerpt: str
    score: float  # similarity with the recency boost: the order shown, never the filter
    pages: tuple[str, ...] = ()  # the web pages it cites (`cited.py` reads them back)


def recency_boost(age_seconds: float) -> float:
    """1 / (1 + age in days): yesterday's report counts half of today's, in ordering only."""
    return 1.0 / (1.0 + max(0.0, age_seconds) / DAY)


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
                pages=tuple(pages_of(meta)),
            )
        )
    found.sort(key=lambda report: -report.score)
    return found[:limit]
