"""Threat: a memory server that never answers. A Chroma server that accepts and says nothing,
or trickles a promised megabyte a byte a second, costs a run one bounded attempt: the run
publishes its report and its summary names memory as unavailable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.brain import LINK, ResearchBrain
from tests.support.cli import QUESTION, cli_command, cli_env
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.stalling_server import Mode, StallingServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts the CLI as a subprocess

# The whole run: about 10 s of start-up and scripted model on a loaded machine, plus one
# 5 s heartbeat. Unbounded, the run never ends; seven bounded attempts would pass a minute.
RUN_TIMEOUT = 60.0


@pytest.mark.parametrize("mode", ["silent", "trickle"])
def test_a_run_whose_memory_server_stalls_publishes_and_says_memory_was_unavailable(
    mode: Mode, tmp_path: Path
) -> None:
    with (
        ScriptedOpenAIServer(ResearchBrain()) as llm,
        FakeTavilyServer() as tavily,
        StallingServer(mode) as memory,
    ):
        env = {
            **cli_env(llm, tavily, tmp_path),
            "USE_MEMORY": "true",
            "CHROMA_HOST": "127.0.0.1",
            "CHROMA_PORT": str(memory.port),
        }
        done = subprocess.run(
            cli_command("--no-clarify", QUESTION),
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        connections = memory.connections
    assert done.returncode == 0, done.stderr
    [report] = (tmp_path / "reports").glob("*.md")
    assert LINK.findall(report.read_text())  # researched and cited, without memory
    memory_line = next(line for line in done.stdout.splitlines() if line.startswith("memory"))
    assert "unavailable" in memory_line and f"127.0.0.1:{memory.port}" in memory_line
    assert "did not answer" in memory_line
    assert connections == 1  # one attempt for the run, not one per opening
