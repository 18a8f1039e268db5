"""`SettlingSqliteSaver`: the SQLite checkpointer, closed only once its writes have landed.

A run that fails can leave a cancelled subgraph's checkpoint writes running after
`ainvoke` has raised: LangGraph does not wait for them. Closing the file under one of them,
between its INSERT and its COMMIT, leaves the connection alive inside SQLite with the write
lock held, and every later connection to the file in this process (a notebook's resume, a
test's "new process") reads "database is locked". `settle()` lets those writes land first;
they are answers a resume reuses.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

SETTLE_SECONDS = 10.0  # the longest a closing file waits for the writes still in flight
MAX_ROUNDS = 100  # a landing write may let another start; the wait is capped in rounds too

T = TypeVar("T")


class SettlingSqliteSaver(AsyncSqliteSaver):
    """`AsyncSqliteSaver` that knows which of its writes are under way."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.in_flight: set[asyncio.Task[Any]] = set()

    async def _tracked(self, write: Awaitable[T]) -> T:
        task = asyncio.current_task()
        if task is None:
            return await write
        self.in_flight.add(task)
        try:
            return await write
        finally:
            self.in_flight.discard(task)

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        await self._tracked(super().aput_writes(*args, **kwargs))

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        return await self._tracked(super().aput(*args, **kwargs))

    async def settle(self) -> None:
        """Wait, at most SETTLE_SECONDS, for the writes other tasks have under way."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_SECONDS
        for _ in range(MAX_ROUNDS):
            await asyncio.sleep(0)  # writes already scheduled begin, and so are seen
            pending = self.in_flight - {asyncio.current_task()}
            left = deadline - loop.time()
            if not pending or left <= 0:
                return
            await asyncio.wait(pending, timeout=left)


@asynccontextmanager
async def open_sqlite(file: Path) -> AsyncIterator[SettlingSqliteSaver]:
    """The checkpointer on `file`; on the way out it settles, then closes the connection."""
    async with aiosqlite.connect(str(file)) as conn:  # as `from_conn_string` opens it
        saver = SettlingSqliteSaver(conn)
        try:
            yield saver
        finally:
            await saver.settle()
