"""A throwaway PostgreSQL cluster: initdb in a temp dir, `postgres` on a free loopback port.

The server runs as the `postgres` user when the tests run as root (it refuses root), listens
on 127.0.0.1 only, keeps its unix socket in the temp dir, and asks for a password over TCP
(scram-sha-256), so a DSN carries one as a real deployment's does. Stopped by its PID.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.support.langgraph_dev import free_port
from tests.support.services import binaries, processes

STARTUP_DEADLINE = 60.0
STOP_DEADLINE = 30.0
SUPERUSER = "postgres"


@dataclass(frozen=True)
class PostgresCluster:
    root: Path
    port: int
    password: str
    pid: int
    host: str = "127.0.0.1"

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}:{self.password}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new, empty database; its DSN."""
        name = name or f"test_{secrets.token_hex(6)}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.dsn(name)

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextlib.contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A fresh cluster for the `with` block; stopped and deleted after."""
    bin_dir = binaries.postgres_bin()
    user = binaries.run_as()
    root = Path(tempfile.mkdtemp(prefix="dr-postgres-"))
    proc: subprocess.Popen[bytes] | None = None
    try:
        password = secrets.token_hex(16)
        if user is not None:
            os.chown(root, user.pw_uid, user.pw_gid)
        pwfile = root / "pwfile"
        pwfile.write_text(password + "\n")
        pwfile.chmod(0o600)
        if user is not None:
            os.chown(pwfile, user.pw_uid, user.pw_gid)
        data = root / "data"
        _run_as(
            user,
            [str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, f"--pwfile={pwfile}"]
            + ["--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8"]
            + ["--no-locale", "--no-sync"],
            root,
        )
        pwfile.unlink()
        proc, port = _start(bin_dir, data, root, user)
        cluster = PostgresCluster(root=root, port=port, password=password, pid=proc.pid)
        _wait_until_ready(cluster, proc)
        yield cluster
    finally:
        if proc is not None:
            stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def _start(
    bin_dir: Path, data: Path, root: Path, user: pwd.struct_passwd | None
) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    command = [str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(root)]
    # A test cluster: durability off (a crash loses only a throwaway database).
    for setting in ["listen_addresses=127.0.0.1", "fsync=off", "synchronous_commit=off"]:
        command += ["-c", setting]
    command += ["-c", "full_page_writes=off", "-c", "max_connections=200"]
    log = (root / "server.log").open("wb")
    with log:
        proc = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=root,
            start_new_session=True,
            **_user_kwargs(user),
        )
    return proc, port


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Fast shutdown (SIGINT) by PID; SIGKILL to its process group if it will not go."""
    processes.stop(proc, signal.SIGINT, STOP_DEADLINE)


def _wait_until_ready(cluster: PostgresCluster, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    log = cluster.root / "server.log"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"postgres exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with psycopg.connect(cluster.dsn(), connect_timeout=2):
                return
        except psycopg.OperationalError:
            time.sleep(0.2)  # polling a starting server, not synchronising with it
    pytest.fail(f"postgres not ready after {STARTUP_DEADLINE:.0f}s:\n{log.read_text()}")


def _user_kwargs(user: pwd.struct_passwd | None) -> dict[str, object]:
    if user is None:
        return {}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": [], "env": _env_for(user)}


def _env_for(user: pwd.struct_passwd) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["HOME"] = user.pw_dir
    env["USER"] = env["LOGNAME"] = user.pw_name
    return env


def _run_as(user: pwd.struct_passwd | None, command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, **_user_kwargs(user))  # type: ignore[call-overload]
    if done.returncode != 0:
        output = (done.stdout + done.stderr).decode(errors="replace")
        pytest.fail(f"{Path(command[0]).name} failed ({done.returncode}):\n{output}")
