"""Page fetching, measured once against the local page server with simulated latency.

Prints two ratios:
- sequential vs parallel time to fetch and extract 20 news-weight pages;
- characters of raw HTML downloaded vs characters a researcher is given (the tool
  message for one search turn that reads the top 3 pages of each of 4 queries).

Run from the repository root: `python -m benchmarks.fetch`.
"""

from __future__ import annotations

import asyncio
import time

from deep_research.config.settings import Context
from deep_research.search import render
from deep_research.search.fetch import Page, PageFetcher
from deep_research.search.netguard import AddressPolicy
from deep_research.search.query import Finding, QueryOutcome
from deep_research.search.types import SearchResult
from deep_research.text import fences
from tests.support.fakes.page_server import PageServer, heavy_article_html

PAGES = 20
LATENCY = 0.25  # seconds the server waits before answering each request
POLICY = AddressPolicy(allowed_hosts=frozenset({"127.0.0.1"}))  # the loopback page server


def urls(base: str) -> list[str]:
    return [f"{base}/news/benchmark-topic-{i}" for i in range(PAGES)]


async def sequential(fetcher: PageFetcher, targets: list[str]) -> list[Page]:
    return [await fetcher.fetch(url) for url in targets]


async def parallel(fetcher: PageFetcher, targets: list[str]) -> list[Page]:
    return list(await asyncio.gather(*(fetcher.fetch(url) for url in targets)))


async def timed(run: object, fetcher: PageFetcher, targets: list[str]) -> tuple[float, list[Page]]:
    start = time.perf_counter()
    pages = await run(fetcher, targets)  # type: ignore[operator]
    return time.perf_counter() - start, pages


def one_turn(pages: list[Page], targets: list[str], context: Context) -> str:
    """The tool message for 4 queries x 5 results, the top 3 of each read (12 pages)."""
    outcomes = []
    for q in range(4):
        findings = []
        for r in range(5):
            i = q * 3 + r
            result = SearchResult(targets[i % PAGES], f"Result {i}", "A search snippet. " * 8)
            findings.append(Finding(result, 0.8, pages[i % PAGES] if r < 3 else None))
        outcomes.append(QueryOutcome(f"benchmark query {q}", findings))
    return render.results_message(
        outcomes,
        nonce=fences.new_nonce(),
        max_page_chars=context.max_page_chars,
        max_chars=context.max_chars_per_turn,
    )


async def main() -> None:
    context = Context()
    with PageServer(latency=LATENCY) as server:
        targets = urls(server.url)
        async with PageFetcher(
            POLICY, timeout=context.fetch_timeout, max_chars=context.max_page_chars
        ) as fetcher:
            await fetcher.fetch(targets[0])  # warm up trafilatura's imports and caches
            seq_time, seq_pages = await timed(sequential, fetcher, targets)
            par_time, par_pages = await timed(parallel, fetcher, targets)
    assert all(p.text for p in seq_pages + par_pages), "every benchmark page must be read"
    print(f"{PAGES} pages, {LATENCY * 1000:.0f} ms simulated latency each")
    print(f"  sequential {seq_time:.2f} s, parallel {par_time:.2f} s")
    print(f"  parallel is {seq_time / par_time:.1f}x faster")

    raw_page = len(heavy_article_html("benchmark-topic-10"))
    extracted = sum(len(p.text) for p in par_pages) / PAGES
    print(f"per page: {raw_page:,} chars of HTML -> {extracted:,.0f} chars of main text")
    print(f"  {raw_page / extracted:.0f}x fewer characters after extraction")
    message = one_turn(par_pages, targets, context)
    read = 12 * raw_page
    print(
        f"one search turn (4 queries, 12 pages read): {read:,} chars of HTML -> "
        f"{len(message):,} chars delivered to the model "
        f"(cap {context.max_chars_per_turn:,}), ratio {read / len(message):.0f}x"
    )


if __name__ == "__main__":
    asyncio.run(main())
