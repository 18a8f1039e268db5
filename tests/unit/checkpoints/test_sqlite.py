"""checkpoints/sqlite.py: the SQLite saver closes only once its writes in flight have landed."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from langgraph.checkpoint.base import empty_checkpoint

from deep_research.checkpoints import open_checkpointer


async def test_closing_the_sqlite_file_lets_writes_in_flight_land_and_frees_it(
    tmp_path: Path,
) -> None:
    """A failed run's cancelled subgraph can leave checkpoint writes running after `ainvoke`
    raised. Closing under them, between INSERT and COMMIT, kept SQLite's write lock held in
    this process ("database is locked" for every later connection) and lost the writes."""
    file = tmp_path / "checkpoints.sqlite"
    for turns in range(12):  # how far the orphaned writes got before the close
        async with open_checkpointer(sqlite=file) as saver:
            saved = await saver.aput(
                {"configurable": {"thread_id": f"t{turns}", "checkpoint_ns": ""}},
                empty_checkpoint(),
                {},
                {},
            )
            writes = [
                asyncio.create_task(saver.aput_writes(saved, [("found", n)], f"task-{n}"))
                for n in range(5)
            ]
            for _ in range(turns):
                await asyncio.sleep(0)
        assert all(write.done() for write in writes), f"writes left hanging after {turns}"
        with sqlite3.connect(file, timeout=0) as other:  # another connection may write now
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
            landed = other.execute(
                "SELECT COUNT(*) FROM writes WHERE checkpoint_id = ?",
                (saved["configurable"]["checkpoint_id"],),
            ).fetchone()[0]
        assert landed == 5, (turns, landed)
