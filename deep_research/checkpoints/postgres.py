"""The PostgreSQL side of checkpoints: one connection, readable errors, and the shared run list.

The run list is a table of JSON records per thread (`deep_research_runs`): the records a
run's traffic log keeps about the run itself (its start, resumes and end, and its progress
events), so every directory using the database sees the same runs. Model traffic stays in
the local traffic log. The table is created on first use, as `AsyncPostgresSaver.setup()`
creates the checkpoint tables.

Sync on purpose: the CLI reads runs before its event loop starts, and the traffic log's
writer thread appends. psycopg is imported in the functions: it is needed only here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from deep_research.checkpoints.target import VARIABLE, CheckpointsConfigError, Target

if TYPE_CHECKING:
    import psycopg

    from deep_research.checkpoints.bounded import BoundedConnection

CONNECT_TIMEOUT = 10
TABLE = "deep_research_runs"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    id bigserial PRIMARY KEY,
    thread_id text NOT NULL,
    record jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS {TABLE}_thread ON {TABLE} (thread_id, id);
"""
# A hostile or damaged database must not make `runs` read without bound.
MAX_THREADS = 10_000
MAX_RECORDS = 100_000


def unreachable(target: Target, error: Exception) -> CheckpointsConfigError:
    """The error for a server that cannot be reached or refuses us: where, why, no password."""
    reason = target.scrub(str(error).strip().splitlines()[0] if str(error).strip() else "")
    return CheckpointsConfigError(
        f"{VARIABLE}: cannot use {target.describe()}: {reason or type(error).__name__}"
    )


@contextmanager
def connect(target: Target, *, timeout: float = CONNECT_TIMEOUT) -> Iterator[BoundedConnection]:
    """A connection to the target's database; `CheckpointsConfigError` if there is none."""
    import psycopg

    from deep_research.checkpoints.bounded import BoundedConnection

    assert target.dsn is not None, "a PostgreSQL target"
    try:
        # libpq takes whole seconds, at least 2.
        seconds = max(2, round(timeout))
        conn = BoundedConnection.connect(target.dsn, autocommit=True, connect_timeout=seconds)
    except psycopg.Error as error:
        raise unreachable(target, error) from None
    with conn:
        try:
            yield conn
        except psycopg.OperationalError as error:  # lost, or silent past the deadline
            raise unreachable(target, conn.silence or error) from None


def probe(target: Target, timeout: float = CONNECT_TIMEOUT) -> str:
    """The server's version, after a round trip (for `doctor`); raises like `connect`."""
    import psycopg

    with connect(target, timeout=timeout) as conn:
        conn.query_timeout = timeout  # the caller's wait, for the round trip too
        try:
            row = conn.execute("SHOW server_version").fetchone()
        except psycopg.Error as error:
            raise unreachable(target, error) from None
    return str(row[0]) if row else "?"


class RunList:
    """The shared run list in the target's database: append and read JSON records by thread."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self._ready = False
        self._writer: psycopg.Connection[Any] | None = None  # append's, kept open

    def setup(self) -> None:
        """Reach the server and create the table if it is missing; raises if unreachable."""
        import psycopg

        with connect(self.target) as conn:
            try:
                conn.execute(SCHEMA)
            except psycopg.Error as error:
                raise unreachable(self.target, error) from None
        self._ready = True

    def append(self, thread_id: str, records: list[dict[str, Any]]) -> None:
        """Add records (from one thread: the traffic log's writer); raises like `connect`."""
        import psycopg

        from deep_research.checkpoints.bounded import BoundedConnection

        if not self._ready:
            self.setup()
        if self._writer is None or self._writer.closed:
            assert self.target.dsn is not None
            try:
                self._writer = BoundedConnection.connect(
                    self.target.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT
                )
            except psycopg.Error as error:
                raise unreachable(self.target, error) from None
        rows = [(thread_id, json.dumps(r, ensure_ascii=False, default=str)) for r in records]
        try:
            with self._writer.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {TABLE} (thread_id, record) VALUES (%s, %s::jsonb)", rows
                )
        except psycopg.Error as error:
            self.close()
            raise unreachable(self.target, error) from None

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def records(self, thread_id: str) -> list[Any] | None:
        """A thread's records, oldest first; None when the run list has none."""
        if not self._ready:  # once per list: `runs` reads every thread's records
            self.setup()
        with connect(self.target) as conn:
            rows = conn.execute(
                f"SELECT record::text FROM {TABLE} WHERE thread_id = %s ORDER BY id LIMIT %s",
                (thread_id, MAX_RECORDS),
            ).fetchall()
        return [_decoded(row[0]) for row in rows] or None

    def thread_ids(self) -> list[str]:
        if not self._ready:  # once per list: `runs` reads every thread's records
            self.setup()
        with connect(self.target) as conn:
            rows = conn.execute(
                f"SELECT thread_id FROM {TABLE} GROUP BY thread_id ORDER BY min(id) LIMIT %s",
                (MAX_THREADS,),
            ).fetchall()
        return [str(row[0]) for row in rows]


def _decoded(text: str) -> Any:
    """A row's record, or None (counted as skipped) when Python cannot read it back: jsonb
    keeps numbers of any length, and json.loads refuses a 5,000-digit one."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
