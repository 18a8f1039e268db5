"""The shared database's schema, prepared by one instance at a time before any serves.

Aegra upgrades its schema when its app starts, and so do LangGraph's checkpointer and store
(`setup()`), with no lock between instances: several started together on a fresh database
race on `CREATE TABLE` and all but one exit (`UniqueViolationError … alembic_version`). The
launcher does the same steps first, holding a PostgreSQL advisory lock, so the others wait
and then find the schema at its head; the app's own start then has nothing left to create.
`RUN_MIGRATIONS_ON_STARTUP=false` (schema upgraded out of band) skips it all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from deep_research.errors import DeepResearchError
from deep_research.text.secrets import redact

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

# One key for every deep_research instance on a database (the ASCII of "deepresr").
LOCK_KEY = 0x6465_6570_7265_7372
LOCK_WAIT = 300.0  # seconds an instance waits while another prepares the schema
POLL = 0.2  # seconds between asks for the lock while another instance holds it
CONNECT_TIMEOUT = 10
SKIP_VARIABLE = "RUN_MIGRATIONS_ON_STARTUP"


class SchemaError(DeepResearchError, RuntimeError):
    """The schema could not be prepared: the message says where and why (no password)."""


def wanted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this launch prepares the schema (unless the operator upgrades it out of band)."""
    value = (os.environ if environ is None else environ).get(SKIP_VARIABLE, "")
    return value.strip().lower() not in {"0", "false", "no", "off"}


def under_lock(dsn: str, work: Callable[[], None], wait: float = LOCK_WAIT) -> None:
    """Run `work` while holding the instances' advisory lock on `dsn`'s database; an
    instance that finds it held waits up to `wait` seconds, then `SchemaError`."""
    import psycopg

    from deep_research.checkpoints.bounded import BoundedConnection

    try:
        conn = BoundedConnection.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as error:
        reason = _first_line(error)
        raise SchemaError(f"cannot reach the database to prepare it: {reason}") from None
    with conn:
        try:
            _take(conn, wait)
        except psycopg.Error as error:  # a server gone silent, or gone
            raise SchemaError(f"the database stopped answering: {_first_line(error)}") from None
        try:
            work()
        finally:
            # Closing the session frees the lock too; unlocking says so sooner.
            with contextlib.suppress(psycopg.Error):
                conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))


def _take(conn: psycopg.Connection[Any], wait: float) -> None:
    """Take the lock, asking again until `wait` has passed. Never a blocking
    `pg_advisory_lock`: a session waiting in it holds a snapshot, and the holder's
    `CREATE INDEX CONCURRENTLY` (one of Aegra's migrations) waits for that snapshot to end."""
    deadline = time.monotonic() + wait
    while True:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone()
        if row and row[0]:
            return
        if time.monotonic() >= deadline:
            raise SchemaError(f"another instance held the schema lock for over {wait:g} s")
        time.sleep(POLL)


def prepare_aegra() -> None:
    """Aegra's migrations, then LangGraph's checkpoint and store tables, under the lock;
    then Aegra is told not to migrate again at start-up."""
    # Aegra reads its settings once, at import: this process's app skips its own migration.
    os.environ[SKIP_VARIABLE] = "false"
    from aegra_api.core.migrations import run_migrations_if_needed
    from aegra_api.settings import settings

    def steps() -> None:
        try:
            run_migrations_if_needed()
            asyncio.run(_langgraph_tables(settings.db.database_url_sync))
        except Exception as error:  # any failure here is the launch's, said in one line
            reason = redact(_first_line(error))
            raise SchemaError(f"preparing the database failed: {reason}") from None

    log.info("preparing the database schema (one instance at a time)")
    under_lock(settings.db.database_url_sync, steps)


async def _langgraph_tables(dsn: str) -> None:
    from aegra_api.config import load_store_config
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore
    from psycopg.rows import dict_row

    from deep_research.checkpoints.bounded import BoundedAsyncConnection

    config = load_store_config()
    index = config.get("index") if config else None
    # Every query bounded, as the checkpointer's are: a server gone silent is an error.
    conn = await BoundedAsyncConnection.connect(
        dsn,
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        connect_timeout=CONNECT_TIMEOUT,
    )
    async with conn:
        await AsyncPostgresSaver(conn=conn).setup()  # type: ignore[arg-type]
        await AsyncPostgresStore(conn=conn, index=index).setup()  # type: ignore[arg-type]


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
