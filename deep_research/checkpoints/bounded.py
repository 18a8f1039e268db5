"""psycopg connections whose every query has a deadline kept by the client.

libpq bounds a connection's start (`connect_timeout`), not a query: a server that finishes
its start-up and then never answers would hold `runs`, or a research run, for ever. The
server's `statement_timeout` is for a server that still works, and TCP keepalives are
answered by the peer's kernel however stuck the server is: only the client's own clock ends
the wait. psycopg sends every wait on the socket (a query, its results, a commit) through
`Connection.wait`, so the deadline goes there. A connection that missed one is closed, as
what it was doing is unknown; the checkpoints written before stay, and a run resumes from
them. Imported only with a PostgreSQL target: psycopg is needed only then.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import Any

import psycopg
from psycopg.abc import RV, PQGen

from deep_research.errors import DeepResearchError

# Seconds one query may wait for the server's answer: a checkpoint write is a few rows.
QUERY_TIMEOUT = 30.0
POLL_INTERVAL = 0.1  # how often a wait looks up from the socket (psycopg's own default)


class NoAnswerError(psycopg.OperationalError, DeepResearchError):
    """The server took the query and did not answer within `QUERY_TIMEOUT`."""


class BoundedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose every query ends by `QUERY_TIMEOUT`."""

    # The deadline this connection missed, if it did: its later errors only say "closed".
    silence: NoAnswerError | None = None
    query_timeout: float | None = None  # this connection's own deadline (`doctor`'s, shorter)

    def wait(
        self, gen: PQGen[RV], interval: float = POLL_INTERVAL, timeout: float | None = None
    ) -> RV:
        limit = _deadline(timeout, self.query_timeout)
        started = time.monotonic()
        try:
            return super().wait(gen, interval, limit)
        except psycopg.OperationalError:
            if (silence := _went_silent(self, started, limit)) is None:
                raise
            raise silence from None


class BoundedAsyncConnection(psycopg.AsyncConnection[Any]):
    """An async psycopg connection whose every query ends by `QUERY_TIMEOUT`."""

    # The deadline this connection missed, if it did: its later errors only say "closed".
    silence: NoAnswerError | None = None
    query_timeout: float | None = None  # this connection's own deadline (`doctor`'s, shorter)

    async def wait(
        self, gen: PQGen[RV], interval: float = POLL_INTERVAL, timeout: float | None = None
    ) -> RV:
        limit = _deadline(timeout, self.query_timeout)
        started = time.monotonic()
        try:
            return await super().wait(gen, interval, limit)
        except psycopg.OperationalError:
            if (silence := _went_silent(self, started, limit)) is None:
                raise
            raise silence from None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        """On a stop (Ctrl-C, a cancelled run), closed without the rollback psycopg tries: the
        server rolls back what the closed connection left open, while a rollback on a
        connection stopped mid-pipeline fails, and psycopg prints that it ignored it."""
        if exc_type is not None and issubclass(exc_type, STOPS):
            await self.close()
            return
        await super().__aexit__(exc_type, exc_val, exc_tb)


# What stops a run without being a database's error: its connection is only closed.
STOPS = (asyncio.CancelledError, KeyboardInterrupt)


def _deadline(asked: float | None, own: float | None) -> float:
    """The shortest of psycopg's own wait (a cancel's), the connection's, `QUERY_TIMEOUT`."""
    return min(x for x in (asked, own, QUERY_TIMEOUT) if x is not None)


def _went_silent(
    conn: BoundedConnection | BoundedAsyncConnection, started: float, limit: float
) -> NoAnswerError | None:
    """The error for a wait that ran to `limit` (the connection, in an unknown state, is
    closed and remembers it), or None for an error of another kind."""
    if time.monotonic() - started < limit:
        return None
    conn.pgconn.finish()
    conn.silence = _no_answer(limit)
    return conn.silence


def _no_answer(seconds: float) -> NoAnswerError:
    return NoAnswerError(
        f"no answer to a query in {seconds:g} s: the server took the connection, then went "
        "silent (checkpoints written before are kept; --resume once it answers)"
    )
