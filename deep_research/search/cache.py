"""The per-run cache: within one thread, each query is searched and each URL fetched once.

Concurrent askers of the same key share one in-flight task instead of starting their own;
later askers get its result. Failures are not kept, so a later asker may try again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Generic, TypeVar

from deep_research.search.fetch import Page
from deep_research.search.types import SearchResult
from deep_research.text.urls import file_key

T = TypeVar("T")

MAX_RUNS = 32  # threads whose caches are kept; the least recently used is dropped first


class OnceMap(Generic[T]):
    """Runs the work for each key at most once at a time; shares its result."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Future[T]] = {}

    async def get(self, key: str, start: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The result for `key`, and whether this call started the work."""
        task = self._tasks.get(key)
        started = task is None
        if task is None:
            task = asyncio.ensure_future(start())
            self._tasks[key] = task  # before any await: a concurrent asker finds it
            task.add_done_callback(partial(self._forget_failure, key))
        # shield: an asker that is cancelled must not cancel the work others wait for
        return await asyncio.shield(task), started

    def _forget_failure(self, key: str, task: asyncio.Future[T]) -> None:
        if (task.cancelled() or task.exception() is not None) and self._tasks.get(key) is task:
            del self._tasks[key]

    def __len__(self) -> int:
        return len(self._tasks)

    def __contains__(self, key: object) -> bool:
        """Whether `key` has work in flight or a kept result (asking for it starts nothing)."""
        return key in self._tasks


@dataclass(frozen=True)
class Searched:
    """A query's results (from the first provider that had some), as cached for the run."""

    results: list[SearchResult]
    provider: str = ""  # whose results these are
    relevance: list[float] = field(default_factory=list)  # 0-1 per result, once scored
    notes: list[str] = field(default_factory=list)  # every fallback taken, in order


@dataclass
class RunCache:
    loop: asyncio.AbstractEventLoop
    searches: OnceMap[Searched] = field(default_factory=OnceMap)
    pages: OnceMap[Page] = field(default_factory=OnceMap)


_runs: OrderedDict[str, RunCache] = OrderedDict()


def run_cache(run_key: str) -> RunCache:
    """The cache of run `run_key` (a thread id), created on first use."""
    loop = asyncio.get_running_loop()
    cache = _runs.get(run_key)
    if cache is None or cache.loop is not loop:  # tasks cannot be awaited across loops
        cache = _runs[run_key] = RunCache(loop)
    _runs.move_to_end(run_key)
    while len(_runs) > MAX_RUNS:
        _runs.popitem(last=False)
    return cache


def query_key(query: str, max_results: int) -> str:
    """Queries differing only in case and spacing are the same search."""
    return f"{max_results}:{' '.join(query.casefold().split())}"


def url_key(url: str) -> str:
    """Spellings of one page share one fetch (see `deep_research.text.urls.page_key`), and
    so do a PDF's pages (`…#page=2`): the file is fetched once."""
    return file_key(url)
