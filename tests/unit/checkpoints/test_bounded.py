"""checkpoints.bounded: a PostgreSQL server that completes its start-up and then never answers
ends every query by the deadline, as one `cannot use` line naming the variable and the host,
exit 2 like an unreachable server, and never with the password."""

from __future__ import annotations

import asyncio
import io
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
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
from tests.support.brain import ResearchBrain, role_of
from tests.support.cli import QUESTION, cli_env
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.stalling_server import FreezingProxy, StallingServer
from tests.support.fakes.tavily_server import FakeTavilyServer

DEADLINE = 0.5
# A hang guard, not a speed limit: the errors name the deadline that stopped each wait.
HANG_GUARD = 120
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
    assert time.monotonic() - started < HANG_GUARD


async def test_an_async_query_ends_by_the_deadline_too(mute: StallingServer) -> None:
    started = time.monotonic()
    conn = await BoundedAsyncConnection.connect(_dsn(mute), autocommit=True, connect_timeout=5)
    async with conn:
        with pytest.raises(NoAnswerError, match="no answer to a query"):
            await conn.execute("SELECT 1")
        assert conn.closed
    assert time.monotonic() - started < HANG_GUARD


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
    assert time.monotonic() - started < HANG_GUARD
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


@pytest.mark.slow
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")  # the log's
def test_a_run_whose_server_goes_silent_mid_run_stops_with_exit_2_and_resumes(
    postgres_dsn: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(bounded, "QUERY_TIMEOUT", 3.0)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    brain = ResearchBrain()
    upstream = urlsplit(postgres_dsn).port
    assert upstream is not None
    with FreezingProxy(upstream) as proxy:

        async def freezing(body: dict[str, Any]) -> Any:
            if role_of(body) == "researcher":  # checkpoints were written before this step
                proxy.freeze()
            return await brain(body)

        with ScriptedOpenAIServer(freezing) as llm, FakeTavilyServer() as tavily:
            for name, value in cli_env(llm, tavily, tmp_path).items():
                monkeypatch.setenv(name, value)
            monkeypatch.setenv(VARIABLE, postgres_dsn.replace(f":{upstream}/", f":{proxy.port}/"))
            started = time.monotonic()
            assert main(["--no-clarify", QUESTION]) == 2
            assert time.monotonic() - started < HANG_GUARD
            captured = capsys.readouterr()
            # The run list's writer may say so first; the last line is the run's own.
            *_, last = captured.err.splitlines()
            assert last.startswith(f"deep-research: {VARIABLE}: cannot use PostgreSQL "), last
            assert last.endswith(
                "no answer to a query in 3 s: the server took the connection, "
                "then went silent (checkpoints written before are kept; "
                "--resume once it answers)"
            ), last
            found = re.search(r"--resume (\w+)", captured.out)
            assert found, captured.out
            proxy.thaw()
            llm.brain = brain
            assert main(["--resume", found[1]]) == 0, capsys.readouterr().err
    assert list((tmp_path / "reports").glob("*.md")), "the resumed run wrote its report"


def test_doctors_probe_waits_no_longer_than_it_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "QUERY_TIMEOUT", 60.0)
    with StallingServer("postgres") as server:
        started = time.monotonic()
        with pytest.raises(CheckpointsConfigError, match="no answer to a query in 2 s"):
            probe(target_from({VARIABLE: _dsn(server)}), timeout=2)
    assert time.monotonic() - started < 50, "its own 2 s, not the connection's 60 s"


@pytest.mark.parametrize("stop", [asyncio.CancelledError, KeyboardInterrupt])
async def test_a_stopped_run_closes_its_connection_without_psycopgs_rollback_warning(
    postgres_dsn: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    stop: type[BaseException],
) -> None:
    """Ctrl-C can stop the checkpointer mid-pipeline, where a rollback fails ("connection
    not in pipeline mode") and psycopg prints that it ignored it. On a stop the connection
    is only closed (the server rolls back what it left open); an ordinary error still gets
    psycopg's rollback."""
    rollbacks: list[str] = []

    async def failing_rollback(self: BoundedAsyncConnection) -> None:
        rollbacks.append("tried")
        raise psycopg.OperationalError("connection not in pipeline mode")

    monkeypatch.setattr(BoundedAsyncConnection, "rollback", failing_rollback)
    conn = await BoundedAsyncConnection.connect(postgres_dsn, autocommit=True)
    with pytest.raises(stop), caplog.at_level("WARNING", logger="psycopg"):
        async with conn:
            await conn.execute("SELECT 1")
            raise stop
    assert conn.closed and not rollbacks
    assert "error ignored" not in caplog.text
    other = await BoundedAsyncConnection.connect(postgres_dsn, autocommit=True)
    with pytest.raises(ValueError), caplog.at_level("WARNING", logger="psycopg"):
        async with other:
            raise ValueError("an ordinary error")
    assert other.closed and rollbacks == ["tried"]
    assert "error ignored in rollback" in caplog.text, "psycopg's own handling, unchanged"
