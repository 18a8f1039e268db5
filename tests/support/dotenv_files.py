"""What the `.env` integration tests share: a `.env` that alone points the CLI at the scripted
servers, a subprocess environment with no setting at all, and reading `.env` switched on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support import envfile as envfile_support
from tests.support.cli import LLM_KEY, REPO, TAVILY_KEY
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer


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


@pytest.fixture
def dotenv_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading `.env` switched on, as for a user (`clean_env` restores `os.environ` after)."""
    envfile_support.switched_on(monkeypatch)
