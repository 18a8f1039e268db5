"""`python -m evals.drb` as a subprocess, as a user runs it, against the scripted servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.citing_brain import CitingBrain
from tests.support.cli import CLI_TIMEOUT, cli_env
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

QUERY = {"id": 73, "prompt": "Wie gut arbeiten Wärmepumpen im Winter?  \u00a0"}


def test_drb_export_runs_as_a_command(tmp_path: Path) -> None:
    (tmp_path / "query.jsonl").write_text(json.dumps(QUERY) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "evals.drb", "--queries", "query.jsonl", "--out", "o.jsonl"]
    with ScriptedOpenAIServer(CitingBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT
        )
        again = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT
        )
    assert done.returncode == 0, done.stderr
    assert "[1/1] 73: researching" in done.stderr and "wrote 1 articles" in done.stderr
    [line] = (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()
    article = json.loads(line)
    assert (article["id"], article["prompt"]) == (QUERY["id"], QUERY["prompt"])
    assert "](https://" in article["article"] and ":~:" not in article["article"]
    assert again.returncode == 0 and "1 of 1 already in o.jsonl; 0 to run" in again.stderr
