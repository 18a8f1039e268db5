"""The per-run search budget, shared by every researcher running in parallel."""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter


class SearchBudget:
    """Counts real searches against the run's cap; safe across concurrent researchers."""

    def __init__(self, limit: int, used: int) -> None:
        self.limit = limit
        self.used = used
        self.used_by: Counter[str] = Counter()
        self._lock = asyncio.Lock()

    async def take(self, owner: str) -> bool:
        """Reserve one search for `owner` (a research call); False once the cap is reached."""
        async with self._lock:
            if self.used >= self.limit:
                return False
            self.used += 1
            self.used_by[owner] += 1
            return True

    async def restore(self, owner: str, made: int) -> None:
        """Count `owner`'s searches from before a resume, which this fresh budget never saw."""
        async with self._lock:
            missing = made - self.used_by[owner]
            if missing > 0:
                self.used += missing
                self.used_by[owner] += missing


# One budget per dispatch (one orchestrator turn's research calls). Entries vanish when
# the last researcher of that dispatch lets go; the persisted count lives in graph state.
_budgets: weakref.WeakValueDictionary[str, SearchBudget] = weakref.WeakValueDictionary()


def shared_budget(dispatch_id: str, limit: int, used: int) -> SearchBudget:
    """The budget all researchers of `dispatch_id` share, created on first use."""
    budget = _budgets.get(dispatch_id)
    if budget is None:
        budget = SearchBudget(limit=limit, used=used)
        _budgets[dispatch_id] = budget
    return budget
