"""`.env` configures the CLI and the Python API: nearest file upward, below the environment.

conftest.py switches reading `.env` off for every other test; these switch it back on,
each in a temporary directory whose `.env` they wrote. What a `.env` may not do (print a
key, name a program, send the user's key elsewhere) is in test_dotenv_trust.py.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.config import envfile
from deep_research.config.endpoints import Endpoints
from deep_research.config.settings import Context
from tests.support.brain import LINK, ResearchBrain, role_of
from tests.support.cli import CLI_TIMEOUT, LLM_KEY, QUESTION, TAVILY_KEY, run_cli
from tests.support.dotenv_files import (
    bare_env,
    dotenv_on,  # noqa: F401  (the fixture: reading `.env` switched on)
    dotenv_text,
)
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer


def files_under(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
def test_cli_run_configured_only_by_dotenv_saves_a_report(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        (tmp_path / ".env").write_text(dotenv_text(llm, tavily))
        result = run_cli(tmp_path, bare_env(tmp_path), QUESTION)
        bodies, llm_auth, tavily_auth = llm.requests, llm.auth_headers, tavily.auth_headers
    assert result.returncode == 0, result.stderr
    [report] = (tmp_path / "reports").glob("*.md")
    cited = set(LINK.findall(report.read_text()))
    assert cited and cited <= tavily.returned_urls
    assert bodies and {b["model"] for b in bodies} == {"dotenv-model"}
    assert set(llm_auth) == {f"Bearer {LLM_KEY}"}
    assert tavily_auth and set(tavily_auth) == {f"Bearer {TAVILY_KEY}"}
    written = files_under(tmp_path / ".deep_research") + report.read_text() + result.stdout
    assert LLM_KEY not in written and TAVILY_KEY not in written, "keys from .env are redacted"


@pytest.mark.slow
def test_doctor_in_a_folder_without_dotenv_uses_and_names_the_users(tmp_path: Path) -> None:
    """Settings follow the user: `~/.config/deep-research/.env` configures every folder."""
    user_env = tmp_path / ".config" / "deep-research" / ".env"
    user_env.parent.mkdir(parents=True)
    elsewhere = tmp_path / "work" / "b"
    elsewhere.mkdir(parents=True)
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        user_env.write_text(dotenv_text(llm, tavily))
        result = run_cli(elsewhere, bare_env(tmp_path), "doctor", "--json")
        bodies, searched = llm.requests, tavily.requests
    checks = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
    assert checks["settings"]["detail"].startswith(f"read {user_env} "), checks["settings"]
    assert bodies and {b["model"] for b in bodies} == {"dotenv-model"}, "the user's endpoint"
    assert searched, "and the user's search provider"
    assert LLM_KEY not in result.stdout and TAVILY_KEY not in result.stdout


API_SCRIPT = """
import asyncio
from langgraph.checkpoint.memory import InMemorySaver
from deep_research.graph import builder

async def run() -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    user = {"role": "user", "content": QUESTION}
    out = await graph.ainvoke({"messages": [user]}, {"configurable": {"thread_id": "1"}},
                              context={"max_searches_per_run": 4})
    print(out["final_report"])

asyncio.run(run())
"""


@pytest.mark.slow
def test_python_api_reads_dotenv_from_the_working_directory(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        (tmp_path / ".env").write_text(dotenv_text(llm, tavily) + "ALLOW_CLARIFICATION=false\n")
        result = subprocess.run(
            [sys.executable, "-c", f"QUESTION = {QUESTION!r}\n{API_SCRIPT}"],
            cwd=tmp_path,
            env=bare_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            check=False,
        )
        bodies = llm.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout.lstrip().startswith("#"), result.stdout
    cited = set(LINK.findall(result.stdout))
    assert cited and cited <= tavily.returned_urls
    assert bodies and {b["model"] for b in bodies} == {"dotenv-model"}
    assert "clarifier" not in map(role_of, bodies), "ALLOW_CLARIFICATION=false came from .env"


@pytest.mark.usefixtures("dotenv_on")
def test_run_context_beats_environment_beats_dotenv_beats_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text(
        "MAX_SEARCHES_PER_RUN=7\nMAX_RESEARCHER_TURNS=3\nLLM_MODEL=from-dotenv\n"
        "LLM_TIMEOUT=42\nLLM_BASE_URL=http://dotenv.test/v1\n"
    )
    monkeypatch.setenv("MAX_RESEARCHER_TURNS", "5")
    monkeypatch.setenv("LLM_BASE_URL", "http://environment.test/v1")
    monkeypatch.chdir(tmp_path)
    assert envfile.load_once() == [tmp_path / ".env"]
    context = Context()
    assert context.max_searches_per_run == 7, ".env beats the default"
    assert context.max_researcher_turns == 5, "the environment beats .env"
    assert context.researcher_model == "local:from-dotenv", "LLM_MODEL follows too"
    assert context.fetch_top_n == 3, "the default stays where nothing is set"
    endpoints = Endpoints()
    assert endpoints.llm_timeout == 42
    assert endpoints.llm_base_url == "http://environment.test/v1"
    run = Context(max_searches_per_run=9, max_researcher_turns=2)
    assert (run.max_searches_per_run, run.max_researcher_turns) == (9, 2), "per run beats both"


@pytest.mark.usefixtures("dotenv_on")
def test_nearest_dotenv_upward_from_a_subdirectory_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("LLM_MODEL=outer\nMAX_PAGE_CHARS=1234\n")
    (tmp_path / "project" / "examples").mkdir(parents=True)
    (tmp_path / "project" / ".env").write_text("LLM_MODEL=project\n")
    monkeypatch.chdir(tmp_path / "project" / "examples")  # where the notebook runs
    assert envfile.load_once() == [tmp_path / "project" / ".env"]
    assert os.environ["LLM_MODEL"] == "project"
    assert "MAX_PAGE_CHARS" not in os.environ, "only the nearest file is read, not merged"
    (tmp_path / "project" / ".env").write_text("LLM_MODEL=changed\n")
    assert envfile.load_once() == [] and os.environ["LLM_MODEL"] == "project", "read once"


@pytest.mark.usefixtures("dotenv_on")
@pytest.mark.parametrize("value", ["0", "false", "OFF"])
def test_dotenv_can_be_switched_off(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("LLM_MODEL=from-dotenv\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(envfile.OPT_OUT, value)
    assert envfile.load_once() == []
    assert "LLM_MODEL" not in os.environ
    assert Context().researcher_model == "local:mlx-community/Qwen3-8B-4bit"


def test_unparsable_lines_are_one_warning_without_their_content(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / ".env"
    path.write_text("LLM_MODEL=kept\nexport 'sk-proj-SECRET-pasted-0123456789\nLLM_TIMEOUT=9\n")
    environ: dict[str, str] = {"LLM_TIMEOUT": "12"}
    with caplog.at_level(logging.WARNING):
        added = envfile.load(path, environ)
    assert added == ["LLM_MODEL"] and environ == {"LLM_TIMEOUT": "12", "LLM_MODEL": "kept"}
    [record] = caplog.records
    assert record.name == "deep_research.config.envfile"
    assert record.getMessage() == f"ignored line 2 of {path}: not NAME=value"


def test_unreadable_dotenv_is_one_warning_not_a_crash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / ".env"
    path.write_bytes(b"LLM_MODEL=\xff\xfe\n")
    with caplog.at_level(logging.WARNING):
        assert envfile.load(path, {}) is None
    [record] = caplog.records
    assert "cannot read it (UnicodeDecodeError)" in record.getMessage()
