"""A throwaway Redis: `redis-server` on a free loopback port, no persistence, stopped by PID."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.langgraph_dev import free_port
from tests.support.services import binaries, processes

STARTUP_DEADLINE = 30.0
STOP_DEADLINE = 15.0


@dataclass(frozen=True)
class RedisServer:
    root: Path
    port: int
    pid: int
    host: str = "127.0.0.1"

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"


@contextlib.contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A fresh, empty redis-server for the `with` block; stopped and deleted after."""
    binary = binaries.redis_server()
    root = Path(tempfile.mkdtemp(prefix="dr-redis-"))
    port = free_port()
    # No RDB snapshots, no AOF: nothing outlives the server. Loopback only.
    command = [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "no", "--dir", str(root), "--daemonize", "no"]
    command += ["--logfile", str(root / "server.log"), "--databases", "16"]
    proc: subprocess.Popen[bytes] | None = None
    try:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=root,
            start_new_session=True,
        )
        server = RedisServer(root=root, port=port, pid=proc.pid)
        _wait_until_ready(server, proc)
        yield server
    finally:
        if proc is not None:
            stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def ping(host: str, port: int, timeout: float = 2.0) -> bool:
    """PING over a raw socket (RESP): True on +PONG."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        return sock.recv(64).startswith(b"+PONG")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM by PID (with no persistence it exits at once); SIGKILL if it will not go."""
    processes.stop(proc, signal.SIGTERM, STOP_DEADLINE)


def _wait_until_ready(server: RedisServer, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    log = server.root / "server.log"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            text = log.read_text(errors="replace") if log.exists() else ""
            pytest.fail(f"redis-server exited with {proc.returncode}:\n{text}")
        with contextlib.suppress(OSError):
            if ping(server.host, server.port):
                return
        time.sleep(0.1)  # polling a starting server, not synchronising with it
    pytest.fail(f"redis-server not ready after {STARTUP_DEADLINE:.0f}s")
