"""What every search provider speaks: a result, a provider's results, its error, its shape.

Apart from the providers themselves so that the library's provider, the cache, the chain
and relevance scoring share these without importing every web client.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from deep_research.errors import DeepResearchError


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    content: str
    score: float | None = None  # the provider's own score, on its own scale (informational)


class Results(list[SearchResult]):
    """A provider's usable results, and how many of its answer's results were malformed."""

    def __init__(self, results: Iterable[SearchResult] = (), malformed: int = 0) -> None:
        super().__init__(results)
        self.malformed = malformed


class SearchError(DeepResearchError, RuntimeError):
    """A provider failed for one query; the message names the provider and the query.

    `transient` errors (timeouts, connection failures, 5xx) are worth retrying;
    `rate_limited` ones are better answered by the next provider than by waiting.
    """

    def __init__(self, message: str, *, transient: bool = False, rate_limited: bool = False):
        super().__init__(message)
        self.transient = transient
        self.rate_limited = rate_limited


class SearchProvider(Protocol):
    name: str
    max_concurrency: int  # searches in flight at once, across every researcher of the process

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...
