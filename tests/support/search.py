"""A search provider for graph tests whose results are derived from the query."""

from __future__ import annotations

import asyncio
import contextlib

from langchain_core.messages import ToolMessage

from deep_research.search.netguard import AddressPolicy
from deep_research.search.types import SearchError, SearchResult
from tests.support.scripted_model import ScriptedChatModel

# The local page server's host name in tests (mapped to 127.0.0.1 by the `pages` fixture).
PAGES_HOST = "pages.test"
# What the fetcher may read in tests that map PAGES_HOST themselves: that name only.
ALLOW_PAGES = AddressPolicy(allowed_hosts=frozenset({PAGES_HOST}))


class ScriptedSearch:
    """A search provider whose results are derived from the query; logs every query."""

    name = "scripted"
    max_concurrency = 16

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._gather: tuple[int, float] | None = None
        self._gathered = asyncio.Event()

    def hold_until(self, in_flight: int, timeout: float) -> None:
        """Each search waits until `in_flight` searches run at once, or `timeout` passes."""
        self._gather = (in_flight, timeout)

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        self.queries.append(query)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self._gather is not None:
                wanted, timeout = self._gather
                if self.in_flight >= wanted:
                    self._gathered.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._gathered.wait(), timeout)
            if "FAIL_SEARCH" in query:
                raise SearchError(f"scripted failed for {query!r}: HTTP 500")
            slug = "-".join(query.lower().split())
            return [
                SearchResult(
                    url=f"https://example.org/{slug}/{i}",
                    title=f"{query} ({i})",
                    content=f"Finding {i} about {query}.",
                    score=round(0.9 - 0.3 * i, 2),
                )
                for i in range(max_results)
            ]
        finally:
            self.in_flight -= 1


class SamePages:
    """Every query finds the same two local article pages (`{base}/article/{slug}-0` and
    `-1`), as related queries do; titles name the query when `titled_by_query`."""

    name = "same-pages"
    max_concurrency = 4

    def __init__(self, base: str, slug: str, *, titled_by_query: bool = False) -> None:
        self.base, self.slug, self.titled_by_query = base, slug, titled_by_query

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        return [
            SearchResult(
                f"{self.base}/article/{self.slug}-{i}",
                f"{query} {i}" if self.titled_by_query else f"Heat pumps {i}",
                "Snippet.",
                0.9,
            )
            for i in range(2)
        ]


def researcher_views(model: ScriptedChatModel) -> list[ToolMessage]:
    """The last tool message of each researcher model call that followed a search."""
    views = []
    for messages, tools in model.calls:
        tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
        if "web_search" in tools and tool_messages:
            views.append(tool_messages[-1])
    return views
