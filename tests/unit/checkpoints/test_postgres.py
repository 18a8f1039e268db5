"""checkpoints.postgres against a real PostgreSQL: the shared run list, readable errors."""

from __future__ import annotations

import pytest

from deep_research.checkpoints.postgres import TABLE, RunList, connect, probe
from deep_research.checkpoints.target import VARIABLE, CheckpointsConfigError, target_from
from tests.support.langgraph_dev import free_port
from tests.support.services import PostgresCluster

pytestmark = pytest.mark.slow


def test_the_run_list_keeps_each_threads_records_in_order(postgres_dsn: str) -> None:
    runs = RunList(target_from({VARIABLE: postgres_dsn}))
    assert runs.thread_ids() == [] and runs.records("a") is None  # the table is created
    runs.append("a", [{"kind": "run", "n": 1}])
    runs.append("b", [{"kind": "run", "n": 1}])
    runs.append("a", [{"kind": "progress", "n": 2}, {"kind": "run", "n": 3, "text": "é\u2028"}])
    runs.close()
    assert runs.thread_ids() == ["a", "b"]
    assert runs.records("a") == [
        {"kind": "run", "n": 1},
        {"kind": "progress", "n": 2},
        {"kind": "run", "n": 3, "text": "é\u2028"},
    ]
    # Another client (another directory) sees the same list.
    assert RunList(target_from({VARIABLE: postgres_dsn})).records("b") == [{"kind": "run", "n": 1}]


def test_setup_twice_is_harmless(postgres_dsn: str) -> None:
    target = target_from({VARIABLE: postgres_dsn})
    RunList(target).setup()
    RunList(target).setup()
    with connect(target) as conn:
        assert conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone() == (0,)


def test_probe_names_the_server_version(postgres_dsn: str) -> None:
    assert probe(target_from({VARIABLE: postgres_dsn})).startswith("15")


def test_a_wrong_password_is_a_config_error_without_it(postgres: PostgresCluster) -> None:
    wrong = postgres.dsn().replace(postgres.password, "not-the-Password-42")
    target = target_from({VARIABLE: wrong})
    with pytest.raises(CheckpointsConfigError, match="password authentication failed") as caught:
        RunList(target).setup()
    text = str(caught.value)
    assert "not-the-Password-42" not in text and postgres.password not in text
    assert f"PostgreSQL postgres@127.0.0.1:{postgres.port}/postgres" in text


def test_no_server_is_a_config_error_naming_where(postgres: PostgresCluster) -> None:
    port = free_port()
    target = target_from({VARIABLE: f"postgresql://u:{postgres.password}@127.0.0.1:{port}/x"})
    with pytest.raises(CheckpointsConfigError, match=f"127.0.0.1:{port}/x") as caught:
        probe(target, timeout=2)
    assert postgres.password not in str(caught.value)


def test_a_missing_database_says_so(postgres: PostgresCluster) -> None:
    target = target_from({VARIABLE: postgres.dsn("no_such_db")})
    with pytest.raises(CheckpointsConfigError, match='"no_such_db" does not exist'):
        probe(target)
