"""`server.schema`: one instance at a time prepares the shared database (a real PostgreSQL).

Aegra's own steps run in its Python 3.12 venv: tests/e2e/distributed/test_start_together.py
starts instances together over them. These hold the lock itself to account."""

from __future__ import annotations

import threading
import time

import pytest

from deep_research.checkpoints import bounded
from deep_research.server import schema
from tests.support.fakes.stalling_server import StallingServer

pytestmark = pytest.mark.slow  # a PostgreSQL cluster for the session


def test_work_under_the_lock_never_overlaps_across_instances(postgres_dsn: str) -> None:
    inside, overlaps, done = [0], [0], []
    guard = threading.Lock()

    def work() -> None:
        with guard:
            inside[0] += 1
            overlaps[0] = max(overlaps[0], inside[0])
        time.sleep(0.3)  # long enough that an unlocked peer would start inside it
        with guard:
            inside[0] -= 1
        done.append(1)

    threads = [
        threading.Thread(target=schema.under_lock, args=(postgres_dsn, work)) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(done) == 3 and overlaps[0] == 1


def test_a_lock_held_past_the_wait_is_a_readable_error(postgres_dsn: str) -> None:
    release = threading.Event()
    holding = threading.Event()

    def hold() -> None:
        holding.set()
        release.wait(timeout=30)

    holder = threading.Thread(target=schema.under_lock, args=(postgres_dsn, hold))
    holder.start()
    try:
        assert holding.wait(timeout=30)
        with pytest.raises(schema.SchemaError, match="held the schema lock for over 0.5 s"):
            schema.under_lock(postgres_dsn, lambda: None, wait=0.5)
    finally:
        release.set()
        holder.join(timeout=30)
    schema.under_lock(postgres_dsn, lambda: None, wait=5)  # and free once released


def test_a_database_that_cannot_be_reached_says_so_without_its_password() -> None:
    dsn = "postgresql://user:hunter2-secret@127.0.0.1:9/none"
    with pytest.raises(schema.SchemaError, match="cannot reach the database") as raised:
        schema.under_lock(dsn, lambda: None)
    assert "hunter2-secret" not in str(raised.value)


@pytest.mark.parametrize(("value", "wanted"), [("", True), ("true", True), ("False", False)])
def test_an_operator_who_migrates_out_of_band_skips_it(value: str, wanted: bool) -> None:
    assert schema.wanted({schema.SKIP_VARIABLE: value}) is wanted


def test_a_database_that_goes_silent_after_start_up_is_a_readable_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every query of the launcher's is bounded like the checkpointer's."""
    monkeypatch.setattr(bounded, "QUERY_TIMEOUT", 0.5)
    with StallingServer("postgres") as server:
        dsn = f"postgresql://u:hunter2-secret@127.0.0.1:{server.port}/db"
        with pytest.raises(schema.SchemaError, match="stopped answering: no answer") as raised:
            schema.under_lock(dsn, lambda: None)
    assert "hunter2-secret" not in str(raised.value)
