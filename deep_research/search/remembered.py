"""Stored passages before the web: a query that memory answers spends no search.

Passages of pages cited by earlier reports (see `deep_research.memory.research`) are
scored on the relevance scale (MiniLM cosine, 0-1) against the query; pages reaching
the threshold and younger than `memory_max_age_days` are returned as findings with their
original retrieval date, read by the researcher inside the same data fences as web text.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deep_research.config.settings import Context
from deep_research.search.fetch import Page
from deep_research.search.query import Finding
from deep_research.search.types import SearchResult

if TYPE_CHECKING:
    from deep_research.memory import Store

# How long a search step waits for another process's write to let go of memory's catalogue
# before it stops asking it (and opens the store, which knows): not the 2 s a listing waits.
STEP_WAIT = 0.05


@dataclass(frozen=True)
class MemoryLookup:
    store: Store
    min_similarity: float
    max_age_days: float
    limit: int

    async def findings(self, query: str) -> list[Finding]:
        """Remembered pages answering `query`, most relevant first; [] when none or broken."""
        from deep_research.memory import MemoryUnavailable
        from deep_research.memory.pages import remembered_pages

        try:
            pages = await remembered_pages(
                self.store,
                query,
                min_similarity=self.min_similarity,
                max_age_days=self.max_age_days,
                limit=self.limit,
            )
        except MemoryUnavailable:
            return []  # the web answers instead; the run's memory status was reported at recall
        return [
            Finding(
                SearchResult(url=p.url, title=p.title, content="", pdf_page=p.pdf_page),
                p.similarity,
                Page(p.url, text=p.text, note=f"from memory, retrieved {p.retrieved}"),
                retrieved=p.retrieved,
            )
            for p in pages
        ]


async def memory_lookup(context: Context) -> MemoryLookup | None:
    """The run's lookup, or None when memory is off, unusable or may not answer searches."""
    if not context.use_memory or context.memory_max_age_days <= 0:
        return None
    from deep_research.memory.listing import nothing_remembered

    # Asked before every search round: a write another process holds the catalogue for (a
    # long `library add`) is not waited for on each one. Not knowing, the store is opened.
    if await asyncio.to_thread(nothing_remembered, None, STEP_WAIT):
        # Nothing remembered yet (passages are stored with their report): chromadb is not
        # imported for an empty memory, nor a search held while a first run's store opens.
        return None
    from deep_research.memory import MemoryUnavailable, open_store

    try:
        store = await open_store()
    except MemoryUnavailable:
        return None
    return MemoryLookup(
        store,
        min_similarity=max(context.memory_min_similarity, context.relevance_threshold),
        max_age_days=context.memory_max_age_days,
        limit=context.max_results_per_search,
    )
