"""checkpoints.bounded: a PostgreSQL server that completes its start-up and then never answers
ends every query by the deadline, as one `cannot use` line naming the variable and the host,
exit 2 like an unreachable server, and never with the password."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.checkpoints import bounded, open_checkpointer
from deep_research.checkpoints.bounded import (
    BoundedAsyncConnection,
    BoundedConnection,
    NoAnswerError,
)
from deep_research.checkpoints.postgres import RunList, probe
from deep_research.checkpoints.target import VARIABLE, CheckpointsConfigError, target_from
from deep_research.cli.main import main
from tests.support.fakes.stalling_server import StallingServer

DEADLINE = 0.5
SECRET = "Mute-Hunter2-secret"


@pytest.fixture
def mute(monkeypatch: pytest.MonkeyPatch) -> Iterator[StallingServer]:
    monkeypatch.setattr(bounded, "QUERY_TIMEOUT", DEADLINE)
    with StallingServer("postgres") as server:
        yield server


def _dsn(server: StallingServer) -> str:
    return f"postgresql://u:{SECRET}@127.0.0.1:{server.port}/db"


def test_a_query_to_a_server_that_never_answers_ends_by_the_deadline(mute: StallingServer) -> None:
    started = time.monotonic()
    with BoundedConnection.connect(_dsn(mute), autocommit=True, connect_timeout=5) as conn:
        assert conn.info.server_version == 150000  # the start-up completed
        with pytest.raises(NoAnswerError, match="no answer to a query in 0.5 s"):
            conn.execute("SELECT 1")
        assert conn.closed, "a connection in an unknown state is not reused"
    assert time.monotonic() - started < DEADLINE + 3


async def test_an_async_query_ends_by_the_deadline_too(mute: StallingServer) -> None:
    started = time.monotonic()
    conn = await BoundedAsyncConnection.connect(_dsn(mute), autocommit=True, connect_timeout=5)
    async with conn:
        with pytest.raises(NoAnswerError, match="no answer to a query"):
            await conn.execute("SELECT 1")
        assert conn.closed
    assert time.monotonic() - started < DEADLINE + 3


@pytest.mark.parametrize("step", ["setup", "records", "thread_ids", "append", "probe"])
def test_the_run_list_and_doctor_say_which_server_went_silent(
    mute: StallingServer, step: str
) -> None:
    target = target_from({VARIABLE: _dsn(mute)})
    runs = RunList(target)
    if step in ("records", "thread_ids", "append"):
        runs._ready = True  # the table exists: the hang is the read or the write itself
    calls = {
        "setup": runs.setup,
        "records": lambda: runs.records("t1"),
        "thread_ids": runs.thread_ids,
        "append": lambda: runs.append("t1", [{"kind": "run"}]),
        "probe": lambda: probe(target),
    }
    started = time.monotonic()
    with pytest.raises(CheckpointsConfigError) as caught:
        calls[step]()
    assert time.monotonic() - started < DEADLINE + 5
    text = str(caught.value)
    assert text.startswith(f"{VARIABLE}: cannot use PostgreSQL u@127.0.0.1:{mute.port}/db: ")
    assert "no answer to a query in 0.5 s" in text and SECRET not in text


async def test_open_checkpointer_says_so_instead_of_hanging(
    mute: StallingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, _dsn(mute))
    with pytest.raises(CheckpointsConfigError, match="no answer to a query") as caught:
        async with open_checkpointer():
            pass
    assert f"127.0.0.1:{mute.port}/db" in str(caught.value) and SECRET not in str(caught.value)


@pytest.mark.parametrize("command", [["runs"], ["--no-clarify", "a question"]])
def test_the_cli_ends_with_exit_2_and_one_line(
    mute: StallingServer,
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(VARIABLE, _dsn(mute))
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"cannot use PostgreSQL u@127.0.0.1:{mute.port}/db: no answer to a query" in err
    assert SECRET not in err


@pytest.mark.parametrize("password", ["e", "x", "ex", "exp"])
def test_a_short_password_leaves_the_drivers_reason_whole(password: str) -> None:
    with StallingServer("silent") as silent:
        target = target_from({VARIABLE: f"postgresql://u:{password}@127.0.0.1:{silent.port}/db"})
        with pytest.raises(CheckpointsConfigError) as caught:
            probe(target, timeout=2)
    assert str(caught.value).endswith("connection timeout expired"), str(caught.value)
