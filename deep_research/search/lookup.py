"""One query end to end: cached search within the budget, relevance filter, top pages read."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from deep_research import progress, tracing
from deep_research.search import relevance
from deep_research.search.budget import Grant
from deep_research.search.cache import RunCache, query_key, url_key
from deep_research.search.chain import SearchChain
from deep_research.search.fetch import Page, PageFetcher
from deep_research.search.providers import SearchError, SearchResult


class CapReached(Exception):
    """The search step's reservation is spent; the query was not sent to any provider."""


@dataclass(frozen=True)
class Searched:
    """A query's results with their relevance (0-1), as cached for the run."""

    results: list[SearchResult]
    relevance: list[float]
    notes: list[str]  # fallbacks taken


@dataclass(frozen=True)
class Finding:
    result: SearchResult
    relevance: float
    page: Page | None = None  # None: not among the pages read

    @property
    def retrieved_text(self) -> str:
        """Everything retrieved for this result: the snippet, then the page text if read."""
        parts = [self.result.content, self.page.text if self.page else ""]
        return "\n\n".join(part for part in parts if part)


@dataclass(frozen=True)
class QueryOutcome:
    query: str
    findings: list[Finding] = field(default_factory=list)
    dropped: int = 0  # results below the relevance threshold
    notes: list[str] = field(default_factory=list)
    error: str = ""  # why there are no results: the search failed or was refused


@dataclass(frozen=True)
class Lookup:
    """What one researcher's search step needs; the cache is the run's, the grant the step's."""

    chain: SearchChain
    cache: RunCache
    grant: Grant
    owner: str
    fetcher: PageFetcher
    max_results: int
    threshold: float
    fetch_top_n: int

    async def run(self, query: str) -> QueryOutcome:
        key = query_key(query, self.max_results)
        try:
            # Spend from this step's grant before the search can be shared: a researcher with
            # none left must not start work that another, with searches left, then joins.
            # (Nothing awaits between the check and `get` starting the work.)
            if key not in self.cache.searches and not self.grant.take():
                raise CapReached(query)
            searched, started = await self.cache.searches.get(key, lambda: self._search(query))
        except CapReached:
            progress.emit("search_refused", id=self.owner, query=query, cap=self.grant.cap)
            return QueryOutcome(
                query,
                error="Search cap reached (this topic's share of the run's "
                f"{self.grant.cap} searches is used): this query was not run. Write your "
                "report from the results you have.",
            )
        except SearchError as error:
            progress.emit("search_failed", id=self.owner, query=query, error=str(error))
            return QueryOutcome(query, error=f"Search failed: {error}")
        notes = list(searched.notes)
        if not started:
            notes.append("Already searched in this run: same results as before, no search used.")
        ranked = sorted(
            zip(searched.results, searched.relevance, strict=True), key=lambda pair: -pair[1]
        )
        kept = [(result, score) for result, score in ranked if score >= self.threshold]
        to_read = [result.url for result, _ in kept[: self.fetch_top_n]]
        pages = await asyncio.gather(*(self._page(url) for url in to_read))
        read = dict(zip(to_read, pages, strict=True))
        findings = [Finding(result, score, read.get(result.url)) for result, score in kept]
        dropped = len(ranked) - len(kept)
        urls = [result.url for result, _ in kept]
        progress.emit("search_done", id=self.owner, query=query, urls=urls, dropped=dropped)
        return QueryOutcome(query, findings, dropped, notes)

    async def _search(self, query: str) -> Searched:
        # Only a query that reaches a provider spends budget: cache hits never get here
        # (`run` took this search from the grant before starting the shared work).
        grant = self.grant
        progress.emit(
            "search",
            id=self.owner,
            query=query,
            sent=grant.counted_before + grant.sent,
            quota=grant.quota,
            cap=grant.cap,
        )
        first = self.chain.providers[0].name
        found = await tracing.named_search(
            query, first, lambda: self.chain.search(query, self.max_results)
        )
        scores = await relevance.score_results(query, found.results)
        return Searched(found.results, scores, found.notes)

    async def _page(self, url: str) -> Page:
        page, fetched = await self.cache.pages.get(url_key(url), lambda: self.fetcher.fetch(url))
        if fetched:  # cache hits are not fetches
            progress.emit(
                "fetch", id=self.owner, url=url, chars=len(page.text), skipped=page.skipped
            )
        return page
