"""What a `.env` may not do: print a key it holds, or, a project's, run a program or take a key."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from deep_research.cli.main import main
from tests.support.brain import ResearchBrain
from tests.support.cli import LLM_KEY, QUESTION, run_cli
from tests.support.dotenv_files import (
    bare_env,
    dotenv_on,  # noqa: F401  (the fixture: reading `.env` switched on)
    dotenv_text,
)
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

OPENAI_KEY = "sk-proj-SECRET-fromdotenv-0123456789"


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
