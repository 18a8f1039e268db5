"""A scholarly search read for real, shared by the open-access tests: the real providers
against fakes of their APIs, the real page fetcher against the local page server
(`paper_pages` in tests/unit/search/conftest.py: `pages.test`, serving the paper's PDF at
/pdf/paper.pdf), one query answered."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from deep_research.search.budget import Grant
from deep_research.search.cache import RunCache
from deep_research.search.chain import SearchChain
from deep_research.search.fetch import PageFetcher
from deep_research.search.query import Searcher
from deep_research.search.step import Answer, SearchSession
from deep_research.search.types import SearchProvider
from tests.support.fakes.scholarly_servers import FakeArxivServer, FakeJsonApi
from tests.support.search import ALLOW_PAGES

FACT = "Attention-based controllers raised heat pump efficiency by 12 percent at minus 20."
PAGES = ["Title page of the paper.", FACT, "References and appendix."]
ABSTRACT = "We study attention-based control of heat pumps in cold climates."
QUERY = "attention heat pump efficiency"
# A fake of a provider's API answering one paper whose open-access PDF is at the URL given,
# the provider for it, and the page the paper's abstract is cited at.
Made = tuple[FakeArxivServer | FakeJsonApi, Callable[[str], SearchProvider], str]
Fake = Callable[[str], Made]


@contextmanager
def searching(fake: Fake, pdf: str, fetch_top_n: int = 1) -> Iterator[SearchSession]:
    api, provider, _ = fake(pdf)
    with api:
        grant = Grant(5, share=5, counted_before=0, cap=5)
        searcher = Searcher(
            SearchChain([provider(api.api_url)]),
            RunCache(asyncio.get_running_loop()),
            grant,
            "owner",
            PageFetcher(ALLOW_PAGES, timeout=5.0, max_chars=5_000),
            max_results=5,
            threshold=0.0,
            fetch_top_n=fetch_top_n,
            scored=False,
        )
        yield SearchSession(searcher, "heat pumps", 5_000)


async def answered(fake: Fake, pdf: str, fetch_top_n: int = 1, max_chars: int = 20_000) -> Answer:
    with searching(fake, pdf, fetch_top_n) as session:
        async with session.searcher.fetcher:
            return await session.answer([QUERY], max_chars=max_chars)
