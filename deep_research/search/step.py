"""One researcher's search step, assembled once: providers and fallbacks, the run's cache,
the address policy and page fetcher, the step's grant. It answers a batch of queries with
the fenced text the researcher reads and the pages it retrieved."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from deep_research.config.endpoints import read_endpoints
from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.config.settings import Context
from deep_research.search import render
from deep_research.search.browser import Renderer, find_browser
from deep_research.search.budget import Grant
from deep_research.search.cache import run_cache
from deep_research.search.chain import SearchChain
from deep_research.search.cleaning import clean
from deep_research.search.fetch import Page, PageFetcher
from deep_research.search.full_text import (
    MAX_ROUNDS,
    by_section,
    in_place_of_failed,
    read_as_meant,
    unread_reason,
)
from deep_research.search.netguard import AddressPolicy
from deep_research.search.providers import make_provider, resolve_provider
from deep_research.search.query import QueryOutcome, Searcher
from deep_research.search.remembered import memory_lookup
from deep_research.search.types import DATED_PROVIDERS, SearchProvider, Years
from deep_research.state import Source
from deep_research.text import fences

# What each source is for, in the words the researcher's tool shows a model.
SOURCE_USES = {
    "tavily": "web",
    "searxng": "web",
    "ddgs": "web",
    "arxiv": "CS, physics, maths papers",
    "europepmc": "medicine, drugs, biology",
    "openalex": "papers, any field",
    "wikipedia": "background, definitions",
}


# The keyless sources `auto` offers beside the web (`scholarly_sources`) on a topic the
# orchestrator marks scholarly (a paper, a drug, a definition): its researcher names one
# for a search, or searches the web.
AUTO_OFFERS = ("arxiv", "europepmc", "openalex", "wikipedia")


def offers_scholarly(context: Context) -> bool:
    """Whether the orchestrator may mark a topic scholarly: `auto` with `scholarly_sources`,
    not resolved to SearXNG, an instance the user runs to keep queries to themselves."""
    return (
        context.search_provider == "auto"
        and context.scholarly_sources
        and resolve_provider(context.search_provider) != "searxng"
    )


def _run_sources(context: Context, scholarly: bool) -> list[str]:
    """The run's provider (`auto` resolved), its fallbacks, then, for a `scholarly` topic,
    what `auto` offers (`offers_scholarly`)."""
    names = [resolve_provider(context.search_provider), *context.fallback_providers]
    if scholarly and offers_scholarly(context):
        names += AUTO_OFFERS
    return [name for name in dict.fromkeys(names) if name != LIBRARY_PROVIDER]


def enabled_sources(context: Context, scholarly: bool) -> list[str]:
    """The sources a researcher may choose between: the run's provider (`auto` resolved),
    then its fallbacks, then, on a `scholarly` topic, the ones `auto` offers; none to choose
    from when there is only one, or when only the user's documents are searched."""
    if context.search_provider == LIBRARY_PROVIDER:
        return []
    sources = _run_sources(context, scholarly)
    return sources if len(sources) > 1 else []


def dated_sources(context: Context, scholarly: bool) -> list[str]:
    """The sources a researcher may search (its provider, fallbacks and, on a `scholarly`
    topic, `auto`'s) that can limit a search to a range of publication years; none when
    only the user's documents are searched."""
    if context.search_provider == LIBRARY_PROVIDER:
        return []
    return [name for name in _run_sources(context, scholarly) if name in DATED_PROVIDERS]


def _library() -> SearchProvider:
    from deep_research.search.library import LibraryProvider  # Chroma loads only when used

    return LibraryProvider()


def library_exists() -> bool:
    """Whether a store that may hold a library exists, so that a user who never added a
    document gets no store created, opened or locked by a web search (and chromadb is not
    imported in the middle of a search)."""
    from deep_research.memory import configured, has_store

    return has_store(configured())


@dataclass(frozen=True)
class Answer:
    """What a batch of queries gives the researcher."""

    text: str  # what the model reads: every piece of web text inside the data fences
    sources: list[Source]  # every page retrieved, for the run's sources and the citation check
    trace: dict[str, Any]  # fallbacks, errors, skipped pages, dropped results (not shown)


@dataclass(frozen=True)
class SearchSession:
    searcher: Searcher
    topic: str
    max_page_chars: int
    # The chain for each source the researcher may choose (`enabled_sources`): it starts
    # at that source and falls back to the others, in the run's order.
    chains: dict[str, SearchChain] = field(default_factory=dict)

    async def answer(
        self,
        queries: list[str],
        max_chars: int,
        shown_before: Collection[str] = (),
        listed_before: Collection[str] = (),
        source: str | None = None,
        years: Years | None = None,
    ) -> Answer:
        """Run `queries` in parallel; the text stays within `max_chars`, and pages whose text
        the researcher was given before (`shown_before`) are named, not repeated. Each query
        is cleaned first (search/cleaning.py): junk is answered with why, never sent.
        `source` starts the chain at that enabled source; `years` limits each search to
        those publication years where the provider can (search/chain.py).

        The searches start in the order of `queries`, then the pages to read in the order
        of their queries: durable calls are told apart by that order (runtime/durable.py)."""
        cleaned = [clean(query) for query in queries]
        chain = self.chains.get(source or "")
        searcher = replace(self.searcher, chain=chain, source=source or "") if chain else None
        searcher = replace(searcher or self.searcher, years=years)
        # A refused query starts no durable call: the others keep their order on a resume.
        started = [await searcher.start(c.query) for c in cleaned if not c.refused]
        found = await asyncio.gather(*(searcher.outcome(pending) for pending in started))
        pages = await searcher.read([url for _, to_read in found for url in to_read])
        # A paper whose full text or PDF could not be read: the next thing to read for it,
        # started after the reads before, in their order, so a resume replays them alike.
        for _ in range(MAX_ROUNDS):
            failed = [in_place_of_failed(o.findings, pages, set(urls)) for o, urls in found]
            if not any(failed):
                break
            pages |= await searcher.read([url for urls in failed for url in urls])
        ran = iter([searcher.with_pages(outcome, pages) for outcome, _ in found])
        outcomes = [
            QueryOutcome(c.query, error=c.refused) if c.refused else next(ran) for c in cleaned
        ]
        # An article read as XML: its sections on the topic, within a page excerpt's share.
        allowance = render.page_allowance(
            outcomes, self.max_page_chars, max_chars, shown_before, listed_before
        )
        outcomes = [
            replace(o, findings=by_section(o.findings, self.topic, allowance)) for o in outcomes
        ]
        text = render.results_message(
            outcomes,
            nonce=fences.new_nonce(),
            max_page_chars=self.max_page_chars,
            max_chars=max_chars,
            shown_before=shown_before,
            listed_before=listed_before,
        )
        trace = _trace(outcomes)
        trace["skipped_pages"] += _unread_papers(outcomes, pages)
        trace["refused"] = [c.query for c in cleaned if c.refused]
        trace["pages_shown"] = sorted(
            {
                f.result.url
                for outcome in outcomes
                for f in outcome.findings
                if f.page and f.page.text and f.result.url not in shown_before
            }
        )
        # Every result is now in the researcher's history, as page text, snippet or both.
        trace["listed"] = sorted({f.result.url for outcome in outcomes for f in outcome.findings})
        return Answer(text, self._sources(outcomes), trace)

    def _sources(self, outcomes: list[QueryOutcome]) -> list[Source]:
        topic = self.topic
        sources = []
        for outcome in outcomes:
            for f in outcome.findings:
                source = Source(
                    url=f.result.url, title=f.result.title, content=f.retrieved_text, found_by=topic
                )
                if f.retrieved:
                    source["retrieved"] = f.retrieved
                if f.result.pdf_page:
                    source["pdf_page"] = f.result.pdf_page
                sources.append(source)
        return sources


def _trace(outcomes: list[QueryOutcome]) -> dict[str, Any]:
    return {
        "notes": [note for outcome in outcomes for note in outcome.notes],
        "errors": [outcome.error for outcome in outcomes if outcome.error],
        "skipped_pages": [
            {"url": f.result.url, "reason": f.page.skipped}
            for outcome in outcomes
            for f in outcome.findings
            if f.page and f.page.skipped
        ],
        "dropped": sum(outcome.dropped for outcome in outcomes),
    }


def _unread_papers(outcomes: list[QueryOutcome], pages: dict[str, Page]) -> list[dict[str, str]]:
    """The open-access full texts, PDFs and HTML renderings fetched and not read as what
    they are: their results keep the abstract, or what was read in their place
    (search/full_text.py), and the trace says why."""
    unread = {}
    for outcome in outcomes:
        for f in outcome.findings:
            for url in (f.result.full_text_url, f.result.pdf_url, f.result.html_url):
                page = pages.get(url) if url else None
                if page is not None and not read_as_meant(url, f.result, page):
                    unread[url] = unread_reason(url, f.result, page)
    return [{"url": url, "reason": reason} for url, reason in unread.items()]


def renderer(policy: AddressPolicy) -> Renderer | None:
    """The search step's page renderer when RENDER_PAGES is on and a browser is found."""
    endpoints = read_endpoints()
    if not endpoints.render_pages:
        return None
    browser = find_browser(endpoints.render_browser)
    if browser is None:
        return None  # doctor says so; pages are read without rendering
    return Renderer(
        policy,
        browser=browser,
        max_pages=endpoints.render_max_pages,
        timeout=endpoints.render_timeout,
    )


@asynccontextmanager
async def session(
    context: Context, *, run_key: str, owner: str, topic: str, grant: Grant
) -> AsyncIterator[SearchSession]:
    """A search step for research call `owner` on `topic`, in run (thread) `run_key`."""
    private = context.search_provider == LIBRARY_PROVIDER
    # Private-only research never reaches the web: no fallback (SEARCH_FALLBACK may be set
    # in a shared .env), and the library is the chain itself rather than a side search.
    names = [context.search_provider, *context.fallback_providers]
    chain = SearchChain([_library()] if private else [make_provider(name) for name in names])
    # The chain for each source a researcher may choose: it starts at that source and
    # falls back to the run's chain in its order (a source `auto` offers, then the web).
    providers = {provider.name: provider for provider in chain.providers}
    chains = {
        name: SearchChain(
            [
                providers.get(name) or make_provider(name),
                *(provider for provider in chain.providers if provider.name != name),
            ]
        )
        for name in enabled_sources(context, scholarly=True)
    }
    # A file check and the working directory: off the loop (langgraph dev refuses both on it).
    side = context.search_library and not private and await asyncio.to_thread(library_exists)
    policy = AddressPolicy.from_env()
    lookup = await memory_lookup(context)
    async with PageFetcher(
        policy,
        timeout=context.fetch_timeout,
        max_chars=context.max_page_chars,
        renderer=await asyncio.to_thread(renderer, policy),  # PATH is searched: off the loop
    ) as fetcher:
        searcher = Searcher(
            chain=chain,
            cache=run_cache(run_key),
            grant=grant,
            owner=owner,
            fetcher=fetcher,
            max_results=context.max_results_per_search,
            threshold=context.relevance_threshold,
            scored=context.relevance_filter,
            fetch_top_n=context.fetch_top_n,
            library=_library() if side else None,
            recall=lookup.findings if lookup and not private else None,
            credit_usd=context.tavily_credit_usd,
        )
        yield SearchSession(searcher, topic, context.max_page_chars, chains)
