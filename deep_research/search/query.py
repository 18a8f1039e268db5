"""One query end to end: cached search within the budget, relevance filter, top pages read.

The search request and each page fetch are durable calls (runtime/durable.py): what was
answered before a stop is read back on resume, not sent again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from deep_research.errors import DeepResearchError
from deep_research.llm import prices
from deep_research.runtime import durable, progress, tracing
from deep_research.search import full_text, relevance
from deep_research.search.budget import Grant
from deep_research.search.cache import RunCache, Searched, query_key, url_key
from deep_research.search.chain import SearchChain, provider_slots
from deep_research.search.fetch import Page, PageFetcher
from deep_research.search.pdf_pages import by_page, with_open_access
from deep_research.search.types import SearchError, SearchProvider, SearchResult, Years


class CapReached(DeepResearchError):
    """The search step's reservation is spent; the query was not sent to any provider."""

    def __init__(self, query: str, owner: str) -> None:
        super().__init__(query)
        self.owner = owner  # whose grant was spent


@dataclass(frozen=True)
class Finding:
    result: SearchResult
    relevance: float
    page: Page | None = None  # None: not among the pages read
    retrieved: str = ""  # ISO date of a page recalled from memory; empty: read in this run

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
class Pending:
    """A query of a batch once started: what memory gave, or its search under way."""

    query: str
    searched: Awaitable[dict[str, Any]]


@dataclass(frozen=True)
class Searcher:
    """Runs one researcher's queries: the cache is the run's, the grant the search step's."""

    chain: SearchChain
    cache: RunCache
    grant: Grant
    owner: str
    fetcher: PageFetcher
    max_results: int
    threshold: float
    fetch_top_n: int
    scored: bool = True  # false (relevance_filter off): every result kept, unscored
    # Stored passages answering a query (search/remembered.py); none: the web answers.
    recall: Callable[[str], Awaitable[list[Finding]]] | None = None
    library: SearchProvider | None = None  # searched beside the chain, spending no budget
    credit_usd: float = 0.0  # what one Tavily credit costs (`tavily_credit_usd`)
    source: str = ""  # the source the researcher chose (its chain starts there); "": default
    years: Years | None = None  # the publication years the researcher asked for; None: any
    # By key: the scoring of a search answered in this step, started as it answered.
    scoring: dict[str, asyncio.Future[list[float]]] = field(default_factory=dict)

    def key(self, query: str) -> str:
        """The query's search: the same query sent to another source, or limited to other
        years, is another search."""
        key = query_key(query, self.max_results)
        key = f"{key} @{self.source}" if self.source else key
        return f"{key} #{self.years.key()}" if self.years is not None else key

    async def run(self, query: str) -> QueryOutcome:
        """One query, searched and its pages read (a batch: `start`, `outcome`, `read`)."""
        outcome, to_read = await self.outcome(await self.start(query))
        return self.with_pages(outcome, await self.read(to_read))

    async def start(self, query: str) -> Pending:
        """The query started as a durable call: memory answers it, or the search does.

        Every query is one durable call, started in the batch's order whatever the
        searches' timing, so a step run again finds each saved answer at its place: whether
        memory answered is part of the answer, not decided again (memory may have changed)."""
        key = self.key(query)
        searched = durable.call("search", durable.digest(key), lambda: self._stored(key, query))
        return Pending(query, searched=searched)

    async def outcome(self, pending: Pending) -> tuple[QueryOutcome, list[str]]:
        """What the query found (the library's passages beside it), and the pages to read."""
        (outcome, to_read), (extra, dropped, notes) = await asyncio.gather(
            self._outcome(pending), self._library(pending.query)
        )
        if not extra and not dropped and not notes:
            return outcome, to_read
        findings = sorted([*outcome.findings, *extra], key=lambda f: -f.relevance)
        dropped += outcome.dropped
        notes = [*outcome.notes, *notes]
        return replace(outcome, findings=findings, dropped=dropped, notes=notes), to_read

    async def read(self, urls: Sequence[str]) -> dict[str, Page]:
        """The pages at `urls`, each fetched once for the run as a durable call, started in
        the order given."""
        unique = list(dict.fromkeys(urls))
        fetches = [durable.call("fetch", durable.digest(url), self._page(url)) for url in unique]
        pages = await asyncio.gather(*fetches)
        return {url: Page(**page) for url, page in zip(unique, pages, strict=True)}

    @staticmethod
    def with_pages(outcome: QueryOutcome, pages: dict[str, Page]) -> QueryOutcome:
        findings = [replace(f, page=pages.get(f.result.url, f.page)) for f in outcome.findings]
        findings = full_text.with_full_text(findings, pages)  # an article's XML: its text
        findings = with_open_access(findings, pages)  # a paper's PDF beside its abstract
        return replace(outcome, findings=by_page(findings, outcome.query))  # a PDF: its pages

    async def _library(self, query: str) -> tuple[list[Finding], int, list[str]]:
        """The library's relevant passages for `query` (cached for the run like a search)."""
        if self.library is None:
            return [], 0, []
        key = "library:" + query_key(query, self.max_results)
        try:
            searched, _ = await self.cache.searches.get(key, lambda: self._library_search(query))
        except SearchError as error:
            return [], 0, [f"Your library was not searched: {error}"]
        # Scored each time, not cached with the passages: a pass that failed once (kept
        # unscored) is not the run's answer for the query (the vectors are: quick).
        scores = await self._scores(query, searched.results)
        pairs = zip(searched.results, scores, strict=True)
        kept = [Finding(result, score) for result, score in pairs if score >= self.threshold]
        return kept, len(searched.results) - len(kept), []

    async def _library_search(self, query: str) -> Searched:
        assert self.library is not None
        async with provider_slots(self.library):
            results = await self.library.search(query, self.max_results)
        return Searched(results, self.library.name)

    async def _outcome(self, pending: Pending) -> tuple[QueryOutcome, list[str]]:
        query = pending.query
        stored = await pending.searched
        if stored["kind"] == "remembered":
            # Read again from memory (local, quick): the call saves only that memory answered.
            remembered = await self.recall(query) if self.recall is not None else []
            urls = [f.result.url for f in remembered]
            progress.emit("search_remembered", id=self.owner, query=query, urls=urls)
            note = "Answered from memory (pages cited by earlier reports): no search used."
            if not remembered:
                note = "Answered from memory before the run was stopped, and those passages "
                note += "are gone now: no search used. Search again if you still need it."
            return QueryOutcome(query, remembered, notes=[note]), []
        if stored["kind"] == "refused":
            progress.emit("search_refused", id=self.owner, query=query, cap=self.grant.cap)
            return QueryOutcome(
                query,
                error="Search cap reached (this topic's share of the run's "
                f"{self.grant.cap} searches is used): this query was not run. Write your "
                "report from the results you have.",
            ), []
        if stored["kind"] == "lost":
            self.grant.lose()
            self.grant.cost += prices.search_micros(
                self.chain.providers[0].name, "basic", self.credit_usd
            )
            progress.emit("search_lost", id=self.owner, query=query)
            return QueryOutcome(
                query,
                error="This search was under way when the run was stopped, and its answer "
                "was not saved: it is counted as sent. Search again if you still need it.",
            ), []
        if stored["kind"] == "error":
            progress.emit("search_failed", id=self.owner, query=query, error=stored["error"])
            return QueryOutcome(query, error=f"Search failed: {stored['error']}"), []
        results = [SearchResult(**result) for result in stored["results"]]
        # Scored as it answered (`_stored`); not saved: a resume scores it again (local).
        early = self.scoring.pop(self.key(query), None)
        relevance = await (early if early is not None else self._scores(query, results))
        searched = Searched(results, stored["provider"], relevance, stored["notes"])
        notes = list(searched.notes)
        # The one who sent it pays for it (basic depth: this code never asks for advanced);
        # a joined or cached search is free.
        started = bool(stored["started"])
        self.grant.answered(started)
        cost = prices.search_micros(searched.provider, "basic", self.credit_usd) * started
        self.grant.cost += cost
        if not started:
            notes.append("Already searched in this run: same results as before, no search used.")
        ranked = sorted(
            zip(searched.results, searched.relevance, strict=True), key=lambda pair: -pair[1]
        )
        kept = [(result, score) for result, score in ranked if score >= self.threshold]
        # The first of what can be read for each (search/full_text.py): a paper costs no
        # more page reads than a web result.
        readable = [choices[0] for result, _ in kept if (choices := full_text.to_read(result))]
        findings = [Finding(result, score) for result, score in kept]
        dropped = len(ranked) - len(kept)
        urls = [result.url for result, _ in kept]
        usd = cost / prices.MICROS
        progress.emit(
            "search_done", id=self.owner, query=query, urls=urls, dropped=dropped, usd=usd
        )
        # Two results naming one PDF (a preprint and its published version) take one read.
        to_read = list(dict.fromkeys(readable))[: self.fetch_top_n]
        return QueryOutcome(query, findings, dropped, notes), to_read

    async def _stored(self, key: str, query: str) -> dict[str, Any]:
        """The query's search as its durable call stores it: plain data, or why there is none.

        It runs only when no answer was saved: on a step that runs again after a stop, a
        search that may have gone out before the stop is not sent again (`lost`)."""
        if self.grant.may_have_gone(key):
            return {"kind": "lost"}
        # Memory knows no publication years: a search limited to some is always sent.
        if self.recall is not None and self.years is None and await self.recall(query):
            return {"kind": "remembered"}
        try:
            searched, started = await self._searched(key, query)
        except CapReached:
            return {"kind": "refused"}
        except SearchError as error:
            return {"kind": "error", "error": str(error)}
        if key not in self.scoring:  # scored while the answer is saved (docs/speed.md)
            scores = asyncio.ensure_future(self._scores(query, searched.results))
            scores.add_done_callback(lambda done: done.cancelled() or done.exception())
            self.scoring[key] = scores
        return {
            "kind": "answered",
            "results": [asdict(result) for result in searched.results],
            "provider": searched.provider,
            "notes": list(searched.notes),
            "started": started,
        }

    async def _searched(self, key: str, query: str) -> tuple[Searched, bool]:
        """The query's results, shared with researchers asking it at the same time."""
        try:
            return await self.cache.searches.get(key, lambda: self._search(query))
        except CapReached as refused:
            if refused.owner == self.owner:
                raise
        # A researcher with nothing left started the work this one joined; refusals are not
        # kept, so this asks again and spends from its own grant.
        return await self.cache.searches.get(key, lambda: self._search(query))

    async def _search(self, query: str) -> Searched:
        # Only a query that reaches a provider spends budget: cache hits never get here.
        if not self.grant.take(self.key(query)):
            raise CapReached(query, self.owner)
        grant = self.grant
        progress.emit(
            "search",
            id=self.owner,
            query=query,
            sent=grant.counted_before + grant.taken,
            share=grant.share,
            cap=grant.cap,
        )
        first = self.chain.providers[0].name
        return await tracing.named_search(
            query, first, lambda: self.chain.search(query, self.max_results, self.years)
        )

    async def _scores(self, query: str, results: Sequence[SearchResult]) -> list[float]:
        if not self.scored:
            return [1.0] * len(results)  # kept, in the provider's order (a stable sort)
        return await relevance.scores_or_kept(query, results, self.owner)

    def _page(self, url: str) -> Callable[[], Awaitable[dict[str, Any]]]:
        """The fetch of `url` as its durable call stores it (the run's cache first)."""

        async def fetched() -> dict[str, Any]:
            page, fetched = await self.cache.pages.get(
                url_key(url), lambda: self.fetcher.fetch(url)
            )
            if fetched:  # cache hits are not fetches
                progress.emit(
                    "fetch", id=self.owner, url=url, chars=len(page.text), skipped=page.skipped
                )
            return asdict(page)

        return fetched
