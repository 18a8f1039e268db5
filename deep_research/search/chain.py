"""Resilient search: retries with backoff, a concurrency limit per provider, a fallback chain."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence
from typing import cast

from deep_research.runtime import process
from deep_research.search.cache import Searched
from deep_research.search.types import (
    DATED_PROVIDERS,
    DatedSearchProvider,
    Results,
    SearchError,
    SearchProvider,
    SearchResult,
    Years,
)

log = logging.getLogger(__name__)

RETRY_ATTEMPTS = 3  # tries per provider for transient errors (timeouts, 5xx)
BACKOFF_BASE = 0.5  # seconds before the first retry; doubled each time, with full jitter
BACKOFF_MAX = 8.0


def provider_slots(provider: SearchProvider) -> asyncio.Semaphore:
    """How many searches `provider` may run at once, shared by every researcher and thread
    of this process (see `runtime/process.py`)."""
    return process.provider_slots(provider.name, provider.max_concurrency)


class SearchChain:
    """Asks providers in order until one answers with results."""

    def __init__(self, providers: Sequence[SearchProvider]) -> None:
        unique = {provider.name: provider for provider in reversed(providers)}
        self.providers = [p for p in providers if unique.get(p.name) is p]
        if not self.providers:
            raise ValueError("a search chain needs at least one provider")

    async def search(self, query: str, max_results: int, years: Years | None = None) -> Searched:
        """Results from the first provider that has some (not yet scored for relevance);
        raises `SearchError` if all fail. A provider that cannot limit its results to
        `years` searches without them, and a note says so."""
        notes: list[str] = []
        failures: list[str] = []
        for provider, following in zip(self.providers, [*self.providers[1:], None], strict=True):
            try:
                results = await self._with_retries(provider, query, max_results, years)
            except SearchError as error:
                if len(self.providers) == 1:
                    raise
                what = "was rate-limited" if error.rate_limited else f"failed ({error})"
            else:
                if isinstance(results, Results) and results.malformed:
                    # Fixed words and a count: shown to the model outside the data fences.
                    notes.append(f"{provider.name}: {results.malformed} malformed results skipped.")
                    log.warning("search for %r: %s", query, notes[-1])
                if results or following is None:
                    if years is not None and provider.name not in DATED_PROVIDERS:
                        notes.append(f"{provider.name}: the date range was not applied there.")
                    return Searched(results, provider.name, notes=notes)
                what = "found nothing"
            failures.append(f"{provider.name} {what}")
            if following is not None:
                notes.append(f"{failures[-1]}; fell back to {following.name}.")
                log.warning("search fallback for %r: %s", query, notes[-1])
        raise SearchError(f"every provider failed for {query!r}: " + "; ".join(failures))

    async def _with_retries(
        self, provider: SearchProvider, query: str, max_results: int, years: Years | None
    ) -> list[SearchResult]:
        dated = years is not None and provider.name in DATED_PROVIDERS
        for attempt in range(RETRY_ATTEMPTS):
            try:
                async with provider_slots(provider):
                    # A provider that asks for a pause between requests (`min_interval`,
                    # seconds: arXiv's terms ask 3) gets it, across every researcher here.
                    interval = getattr(provider, "min_interval", 0.0)
                    if interval > 0:
                        await asyncio.sleep(process.provider_pause(provider.name, interval))
                    if dated:
                        dated_provider = cast(DatedSearchProvider, provider)
                        return await dated_provider.search(query, max_results, years=years)
                    return await provider.search(query, max_results)
            except SearchError as error:
                # A provider that says when to come back, soon, is waited for that long.
                soon = error.retry_after is not None and error.retry_after <= BACKOFF_MAX
                retried = soon or (error.transient and not error.rate_limited)
                if not retried or attempt == RETRY_ATTEMPTS - 1:
                    raise
                delay = random.uniform(0, min(BACKOFF_MAX, BACKOFF_BASE * 2**attempt))
                delay = error.retry_after if soon and error.retry_after is not None else delay
                log.info("retrying %s in %.2f s after: %s", provider.name, delay, error)
                await asyncio.sleep(delay)  # outside the slot: a waiting retry holds no slot
        raise AssertionError("unreachable: the last attempt returns or raises")
