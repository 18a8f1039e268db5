"""What docs/agent-server.md and docs/mcp.md tell a reader whose port 2024 is taken:
`langgraph dev` says so, serves on a free port, and its `API:` line is the address."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.brain import ResearchBrain
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import REPO, STARTUP_DEADLINE, server_env, wait_until_ready
from tests.support.readme import section

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MOVED = re.compile(r"Port (\d+) is already in use, using port (\d+) instead\.")
AGENT_SERVER = "# Through the Agent Server and Studio"
API_LINE = re.compile(r"API: (?:\x1b\[\d+m)?(http://[\w.:]+)")


def test_the_docs_name_the_port_once_and_where_the_real_one_is_printed() -> None:
    for heading in (AGENT_SERVER, "# As an MCP tool (Claude Desktop, Cursor, VS Code)"):
        text = section(heading)
        assert "`🚀 API:`" in text and "2024" in text, heading
    agent = section(AGENT_SERVER)
    assert MOVED.search(agent), "the page quotes the line `langgraph dev` prints"
    assert "DEEP_RESEARCH_SERVER" in agent


def test_a_taken_port_moves_the_server_and_its_api_line_says_where(tmp_path: Path) -> None:
    config = tmp_path / "langgraph.json"
    project = json.loads((REPO / "langgraph.json").read_text())
    config.write_text(json.dumps({"dependencies": [str(REPO)], "graphs": project["graphs"]}))
    (home := tmp_path / "home").mkdir()
    log = tmp_path / "langgraph-dev.log"
    with (
        ScriptedOpenAIServer(ResearchBrain()) as model,
        FakeTavilyServer() as tavily,
        socket.socket() as taken,
    ):
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        command = [str(Path(sys.executable).parent / "langgraph"), "dev", "--port", str(port)]
        command += ["--host", "127.0.0.1", "--no-browser", "--no-reload", "--config", str(config)]
        with log.open("wb") as out:
            proc = subprocess.Popen(
                command,
                cwd=tmp_path,
                env=server_env(home, model, tavily),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            url = _api_line(log, proc)  # printed a moment before the server listens
            wait_until_ready(url, proc, log)
            with httpx.Client(trust_env=False, timeout=5.0) as http:
                assert http.get(f"{url}/ok").status_code == 200
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
    moved = MOVED.search(log.read_text(errors="replace"))
    assert moved and int(moved.group(1)) == port, log.read_text(errors="replace")
    assert url == f"http://127.0.0.1:{moved.group(2)}"


def _api_line(log: Path, proc: subprocess.Popen[bytes]) -> str:
    """The address on the `API:` line, once the server has printed it."""
    deadline = time.monotonic() + STARTUP_DEADLINE
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if found := API_LINE.search(text):
            return found.group(1)
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{text}")
        time.sleep(0.25)  # polling a starting server's log, not synchronising with it
    pytest.fail(f"no API: line after {STARTUP_DEADLINE:.0f}s:\n{log.read_text()}")
