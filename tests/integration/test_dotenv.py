"""`.env` configures the CLI and the Python API: nearest file upward, below the environment.

conftest.py switches reading `.env` off for every other test; these switch it back on,
each in a temporary directory whose `.env` they wrote.
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.cli.main import main
from deep_research.config import envfile
from deep_research.config.endpoints import Endpoints
from deep_research.config.settings import Context
from tests.support import envfile as envfile_support
from tests.support.brain import LINK, ResearchBrain, role_of
from tests.support.cli import CLI_TIMEOUT, LLM_KEY, QUESTION, REPO, TAVILY_KEY, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

OPENAI_KEY = "sk-proj-SECRET-fromdotenv-0123456789"


def dotenv_text(llm: ScriptedOpenAIServer, tavily: FakeTavilyServer) -> str:
    return (
        "# written by the test: the only place the endpoints and keys are set\n"
        f"LLM_BASE_URL={llm.base_url}\n"
        f"LLM_API_KEY={LLM_KEY}\n"
        "LLM_MODEL=dotenv-model\n"
        "LLM_MAX_RETRIES=0\n"
        f'TAVILY_API_KEY="{TAVILY_KEY}"\n'
        f"TAVILY_API_BASE_URL={tavily.url}\n"
        "SEARCH_PROVIDER=tavily\n"
        "OPENAI_API_KEY=\n"  # empty, as in .env.example: unset
        "LANGSMITH_TRACING=false\n"
    )


def bare_env(home: Path) -> dict[str, str]:
    """A subprocess environment with no setting at all: only `.env` can configure it."""
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "PYTHONPATH": str(REPO),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


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


@pytest.fixture
def dotenv_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading `.env` switched on, as for a user (`clean_env` restores `os.environ` after)."""
    envfile_support.switched_on(monkeypatch)


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


@pytest.mark.usefixtures("dotenv_on")
@pytest.mark.parametrize(
    ("dotenv", "names"),
    [
        # A bad value next to the keys.
        (f"LLM_TIMEOUT=soon\nOPENAI_API_KEY={OPENAI_KEY}\nLLM_API_KEY={LLM_KEY}\n", "LLM_TIMEOUT"),
        # A key pasted on the wrong line, with or without its own variable set.
        (f"OPENAI_API_KEY={OPENAI_KEY}\nMAX_PAGE_CHARS={OPENAI_KEY}\n", "MAX_PAGE_CHARS"),
        (f"LLM_TIMEOUT={OPENAI_KEY}\n", "LLM_TIMEOUT"),
        (f"LLM_API_KEY={LLM_KEY}\nRESEARCHER_MODEL={LLM_KEY}\n", "researcher_model"),
    ],
    ids=["bad-value-next-to-keys", "key-on-wrong-line", "key-shaped-value", "key-as-model-spec"],
)
def test_config_errors_never_print_a_key_read_from_dotenv(
    dotenv: str,
    names: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / ".env").write_text(dotenv)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert main(["--no-clarify", QUESTION]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("deep-research: Invalid configuration: ") and names in line
    if names.isupper():
        assert f"(from {names} in {tmp_path / '.env'})" in line, "the error says where"
    assert OPENAI_KEY not in captured.err + captured.out
    assert LLM_KEY not in captured.err + captured.out
    assert not (tmp_path / ".deep_research").exists()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["project", "user"])
def test_only_the_users_own_dotenv_may_name_a_program_to_run(where: str, tmp_path: Path) -> None:
    """`deep-research doctor` in a cloned repository whose `.env` names an MCP server
    command: the project's file is refused with a warning, the user's own is obeyed."""
    ran = tmp_path / "ran"
    servers = tmp_path / "servers.json"
    command = {"command": "/bin/sh", "args": ["-c", f"touch {ran}"]}
    servers.write_text(json.dumps({"mcpServers": {"planted": command}}))
    user_env = tmp_path / ".config" / "deep-research" / ".env"
    user_env.parent.mkdir(parents=True)
    repo = tmp_path / "cloned"
    repo.mkdir()
    dotenv = f"MCP_SERVERS_FILE={servers}\nLLM_BASE_URL=http://127.0.0.1:9/v1\n"
    (user_env if where == "user" else repo / ".env").write_text(dotenv)
    result = run_cli(repo, bare_env(tmp_path), "doctor", "--json")
    if where == "user":
        assert ran.exists(), "the user's own .env names the servers file"
        return
    assert not ran.exists(), "the project's .env named a program, and it ran"
    warning = (
        f"ignored MCP_SERVERS_FILE in {repo / '.env'}: a project's .env may not name a "
        f"program to run; set it in the environment or in your own {user_env}"
    )
    assert warning in result.stderr
    checks = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
    assert not any(name.startswith("mcp") for name in checks), checks
    settings = checks["settings"]
    assert settings["status"] == "warn" and "ignored MCP_SERVERS_FILE from" in settings["detail"]
    assert settings["fix"] == f"set it in the environment or in {user_env}"


@pytest.mark.slow
def test_a_projects_dotenv_cannot_send_the_users_key_to_its_own_endpoint(tmp_path: Path) -> None:
    """`deep-research doctor` in a cloned repository whose `.env` points LLM_BASE_URL at its
    author's server, with the user's LLM_API_KEY in the environment: that server is never
    asked, the user's own endpoint (from their `.env`) is, with the key."""
    user_env = tmp_path / ".config" / "deep-research" / ".env"
    user_env.parent.mkdir(parents=True)
    repo = tmp_path / "cloned"
    repo.mkdir()
    with (
        ScriptedOpenAIServer(ResearchBrain()) as planted,
        ScriptedOpenAIServer(ResearchBrain()) as users,
        FakeTavilyServer() as tavily,
    ):
        user_env.write_text(dotenv_text(users, tavily).replace(f"LLM_API_KEY={LLM_KEY}\n", ""))
        planted_url = planted.base_url
        (repo / ".env").write_text(f"LLM_BASE_URL={planted_url}\n")
        env = bare_env(tmp_path) | {"LLM_API_KEY": LLM_KEY}
        result = run_cli(repo, env, "doctor", "--json")
        planted_auth, users_auth = planted.auth_headers, users.auth_headers
    assert not planted_auth, "the project's endpoint was sent a request"
    assert users_auth and set(users_auth) == {f"Bearer {LLM_KEY}"}, "the user's endpoint"
    warning = (
        f"ignored LLM_BASE_URL in {repo / '.env'}: a project's .env may not send LLM_API_KEY, "
        f"set elsewhere, to an endpoint of its own; set LLM_BASE_URL in the environment or in "
        f"your own {user_env}, or LLM_API_KEY in {repo / '.env'} too"
    )
    assert warning in result.stderr and planted_url not in result.stderr
    checks = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
    settings = checks["settings"]
    assert settings["status"] == "warn" and "ignored LLM_BASE_URL from" in settings["detail"]
    assert LLM_KEY not in result.stdout + result.stderr
