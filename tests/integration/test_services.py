"""The real services the tests start (tests/support/services/): up, reachable, gone after."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest

from tests.support.services import PostgresCluster, binaries, postgres_cluster, redis_server
from tests.support.services.redis import ping

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    """A live (not zombie) process with this PID."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_postgres_cluster_serves_a_database_with_a_password_then_leaves_nothing() -> None:
    with postgres_cluster() as cluster:
        root, pid = cluster.root, cluster.pid
        workers = _children(pid)
        assert workers, "postgres forks its background workers"
        dsn = cluster.create_database("helpers_check")
        assert f":{cluster.password}@127.0.0.1:{cluster.port}/helpers_check" in dsn
        with psycopg.connect(dsn) as conn:
            conn.execute("CREATE TABLE t (x int)")
            conn.execute("INSERT INTO t VALUES (42)")
            assert conn.execute("SELECT x FROM t").fetchone() == (42,)
            assert conn.execute("SELECT current_database()").fetchone() == ("helpers_check",)
        # Over TCP a password is asked for: a wrong one is refused.
        wrong = dsn.replace(cluster.password, "wrong")
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(wrong, connect_timeout=5).close()
        cluster.drop_database("helpers_check")
        with pytest.raises(psycopg.OperationalError, match="does not exist"):
            psycopg.connect(dsn, connect_timeout=5).close()
    assert not _alive(pid)
    assert not [worker for worker in workers if _alive(worker)]
    assert not root.exists()


def test_postgres_listens_on_loopback_only(postgres: PostgresCluster) -> None:
    with psycopg.connect(postgres.dsn()) as conn:
        row = conn.execute("SHOW listen_addresses").fetchone()
    assert row == ("127.0.0.1",)


def test_postgres_dsn_is_a_fresh_database_each_test(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        conn.execute("CREATE TABLE left_behind (x int)")  # the next test must not see it
    assert tables == (0,)


def test_postgres_dsn_again_sees_no_earlier_table(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn) as conn:
        found = conn.execute("SELECT to_regclass('public.left_behind')").fetchone()
    assert found == (None,)


def test_postgres_runs_as_the_postgres_user_when_tests_are_root(postgres: PostgresCluster) -> None:
    owner = Path(f"/proc/{postgres.pid}").stat().st_uid
    expected = binaries.run_as()
    assert owner == (expected.pw_uid if expected else os.getuid())


def test_redis_answers_ping_keeps_nothing_and_stops() -> None:
    with redis_server() as server:
        root, pid = server.root, server.pid
        assert ping(server.host, server.port)
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
    assert not _alive(pid)
    assert not root.exists()
    with pytest.raises(OSError):
        ping("127.0.0.1", server.port)


def test_redis_url_fixture_is_served(redis_url: str) -> None:
    host, port = redis_url.removeprefix("redis://").split("/")[0].split(":")
    assert ping(host, int(port))


def test_a_missing_program_fails_naming_the_apt_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binaries, "POSTGRES_BIN_DIRS", [Path("/nonexistent")])
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y postgresql-15"):
        binaries.postgres_bin()
    with pytest.raises(pytest.fail.Exception, match="redis-server"):
        binaries.redis_server()
