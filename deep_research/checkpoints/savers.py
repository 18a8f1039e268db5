"""`open_checkpointer()`: the checkpointer the environment names, for the CLI and for Python.

    async with open_checkpointer() as saver:
        graph = builder.compile(checkpointer=saver)

Unset DEEP_RESEARCH_CHECKPOINTS: `AsyncSqliteSaver` on `.deep_research/checkpoints.sqlite`
(the CLI's file, relative to the working directory). A `postgresql://` URL:
`AsyncPostgresSaver` on that database, its tables created on first use, so any directory
(and any machine) reaching the server sees the same threads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from deep_research.checkpoints.postgres import CONNECT_TIMEOUT, unreachable
from deep_research.checkpoints.target import DEFAULT_SQLITE, Target, target_from
from deep_research.config.private import folder_for_file, private_directory, private_file

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver


@asynccontextmanager
async def open_checkpointer(
    target: Target | None = None, *, sqlite: Path | str | None = None
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """The checkpointer for `target` (default: the environment's); `sqlite` moves the file.

    A bad DEEP_RESEARCH_CHECKPOINTS or a server that cannot be reached raises
    `CheckpointsConfigError` (a `ConfigError`) saying where, without the password."""
    if target is None:
        target = target_from() if sqlite is None else target_from(sqlite=Path(sqlite))
    if target.dsn is None:
        from deep_research.checkpoints.sqlite import open_sqlite

        # Checkpointed runs are the user's only: `.deep_research/` is the agent's own and is
        # closed; a folder the user named for the file is only said when open to others.
        if target.sqlite.parent.name == DEFAULT_SQLITE.parent.name:
            private_directory(target.sqlite.parent)
        else:
            folder_for_file(target.sqlite)
        private_file(target.sqlite)
        async with open_sqlite(target.sqlite) as saver:
            yield saver
        return
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row

    from deep_research.checkpoints.bounded import BoundedAsyncConnection

    try:
        # As `AsyncPostgresSaver.from_conn_string` connects, with deadlines: to connect,
        # and for each query (bounded.py).
        conn = await BoundedAsyncConnection.connect(
            target.dsn,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=CONNECT_TIMEOUT,
        )
    except psycopg.Error as error:
        raise unreachable(target, error) from None
    async with conn:
        postgres = AsyncPostgresSaver(conn=conn)  # type: ignore[arg-type]
        try:
            await postgres.setup()  # its tables and migrations, if not there yet
        except psycopg.Error as error:
            raise unreachable(target, error) from None
        try:
            yield postgres
        except psycopg.OperationalError as error:  # lost mid-run, or silent past the deadline
            raise unreachable(target, conn.silence or error) from None
