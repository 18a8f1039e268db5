"""Starting a real `langgraph dev` server for end-to-end tests.

The server is a subprocess with an explicit environment and a config written to a
temporary directory whose `"env"` is an empty mapping: `langgraph dev` lets the config's
env (normally the project's `.env`) override the process environment, so a developer's
`.env` must not leak in. The graphs and http entries are copied from the project's
`langgraph.json`, so the tests serve what `langgraph dev` in the checkout would (the
project's `/mcp` included).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.brain import ResearchBrain
from tests.support.fakes.openai_server import Brain, ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

REPO = Path(__file__).resolve().parents[2]
# Seconds a shared memory's server outlives its last user: long enough for a test's next
# command to attach, short enough that no server outlives the test by much.
SERVER_IDLE = "3"
ASSISTANT = "deep_research"
STARTUP_DEADLINE = 60.0  # generous: it starts in ~5 s on an idle machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(home: Path, model: ScriptedOpenAIServer, tavily: FakeTavilyServer) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": os.pathsep.join([bin_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "VIRTUAL_ENV": str(Path(bin_dir).parent),
        "PYTHONPATH": str(REPO),  # this checkout's graph, whatever the venv has installed
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",  # no PyPI look-up at startup
        "LANGSMITH_TRACING": "false",
        "LOG_COLOR": "false",  # plain text in the captured log
        "LLM_BASE_URL": model.base_url,
        "LLM_MAX_RETRIES": "0",
        "TAVILY_API_KEY": "tvly-test",
        "TAVILY_API_BASE_URL": tavily.url,
        "SEARCH_PROVIDER": "tavily",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "DEEP_RESEARCH_DOTENV": "0",  # the graph's own `.env` read, too
        "USE_MEMORY": "false",  # the tests of memory turn it on
        "MEMORY_SERVER_IDLE": SERVER_IDLE,  # a shared memory's server ends soon after the test
    }


def wait_until_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    with httpx.Client(trust_env=False, timeout=2.0) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{log.read_text()}")
            try:
                if http.get(f"{url}/ok").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)  # polling a starting server, not synchronising with it
    pytest.fail(f"langgraph dev not ready after {STARTUP_DEADLINE:.0f}s:\n{log.read_text()}")


@contextlib.contextmanager
def langgraph_dev(tmp_path: Path, env: dict[str, str], jobs: int = 4) -> Iterator[str]:
    """A `langgraph dev` serving this checkout's graphs; yields its URL, stops it after."""
    project = json.loads((REPO / "langgraph.json").read_text())
    served = {key: project[key] for key in ("graphs", "http") if key in project}
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"dependencies": [str(REPO)], **served, "env": {}}))
    port, log = free_port(), tmp_path / "langgraph-dev.log"
    command = ["langgraph", "dev", "--port", str(port), "--host", "127.0.0.1"]
    command += ["--no-browser", "--no-reload", "--config", str(config)]
    command += ["--n-jobs-per-worker", str(jobs)]  # several threads' runs at once
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / command[0]), *command[1:]],
            cwd=tmp_path,  # `.langgraph_api/` persistence lands here, not in the repo
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, proc, log)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        print(f"--- langgraph dev output ({log}) ---\n{log.read_text()}")  # shown on failure


@dataclass(frozen=True)
class DevServer:
    """A running `langgraph dev` and the scripted model and fake Tavily behind it."""

    url: str
    model: ScriptedOpenAIServer
    tavily: FakeTavilyServer
    log: Path

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"  # the project's MCP app, as langgraph.json mounts it


@contextlib.contextmanager
def dev_server(
    tmp_path: Path, brain: Brain, extra_env: dict[str, str] | None = None, jobs: int = 4
) -> Iterator[DevServer]:
    """`langgraph dev` in tmp_path (its home in tmp_path/home) over fresh fakes, brain answering."""
    (home := tmp_path / "home").mkdir()
    with ScriptedOpenAIServer(brain) as model, FakeTavilyServer() as tavily:
        env = server_env(home, model, tavily) | (extra_env or {})
        with langgraph_dev(tmp_path, env, jobs) as url:
            yield DevServer(url, model, tavily, tmp_path / "langgraph-dev.log")


@pytest.fixture(scope="module", name="server")
def module_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    """One server for the module: starting `langgraph dev` costs seconds, and each test runs
    on its own thread. The module's `BRAIN` (a brain class, `ResearchBrain` unless named)
    answers behind it, and its `SERVER_ENV` is added to the server's environment. A
    conftest.py imports it to offer it to its folder's modules."""
    module = request.module
    brain = getattr(module, "BRAIN", ResearchBrain)
    extra_env: dict[str, str] = getattr(module, "SERVER_ENV", {})
    tmp_path = tmp_path_factory.mktemp("langgraph-dev-" + module.__name__.rsplit(".", 1)[-1])
    with dev_server(tmp_path, brain(), extra_env) as server:
        yield server
