"""Shared fixtures: a clean environment, a scripted chat model, a scripted search provider."""

from __future__ import annotations

import importlib
import os

# Before anything imports deep_research (which reads `.env` on import): no test reads a
# developer's `.env`; the tests that prove `.env` is read switch this back on.
os.environ["DEEP_RESEARCH_DOTENV"] = "0"

import ipaddress
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from deep_research.config.endpoints import Endpoints
from deep_research.config.model_providers import PROVIDERS
from deep_research.config.settings import Context
from deep_research.llm import chat_models
from deep_research.search import netguard
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.scripted_model import Script, ScriptedChatModel
from tests.support.search import PAGES_HOST, ScriptedSearch
from tests.support.services import PostgresCluster, postgres_cluster, redis_server

# Slow, marked here by path: modules whose text belongs to the README's owners.
SLOW_BY_PATH = {
    "tests/e2e/test_readme.py",
    "tests/e2e/test_readme_links.py",
    "tests/e2e/test_readme_snippets.py",
    "tests/e2e/test_readme_speed.py",
    "tests/e2e/test_evals_readme.py",
}
ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.relative_to(ROOT).as_posix() in SLOW_BY_PATH:
            item.add_marker(pytest.mark.slow)
    # Under `-n auto` (pytest-xdist, a file to a worker): the slow tests first, the quick
    # ones after (each group in its own order), so the quick files fill the workers' last
    # minutes instead of one worker ending alone on a long file. In one process (`-x`, a
    # debugger) the order stays the files'.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


ENV_NAMES = [name.upper() for name in [*Context.model_fields, *Endpoints.model_fields]] + [
    "LLM_MODEL",
    "OPENAI_BASE_URL",
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING_V2",
    # Other providers' keys and the base URLs their clients read by themselves.
    *(key for provider in PROVIDERS.values() for key in provider.keys),
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_URL",
    "OLLAMA_HOST",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_PROFILE",
    # Where the CLI keeps runs (docs/checkpoints.md): a test sets it to its own database.
    "DEEP_RESEARCH_CHECKPOINTS",
]


@pytest.fixture(autouse=True)
def clean_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """No developer setting (or real key) leaks into a test, nor one test's environment into
    the next; no test writes a store in the repo."""
    # The environment as it was, restored after: code under test (`.env`'s loader) writes
    # `os.environ` directly, and the settings read names in any case, so a `Llm_Api_Key`
    # left behind would be the next test's key.
    saved = dict(os.environ)
    wanted = set(ENV_NAMES)
    for name in [name for name in os.environ if name.upper() in wanted]:
        monkeypatch.delenv(name)
    # Memory is off unless a test turns it on: a store costs a MiniLM load and a Chroma
    # client, and no test should find another's reports. Its directory is the test's own.
    monkeypatch.setenv("MEMORY_DIR", str(tmp_path_factory.mktemp("memory")))
    monkeypatch.setenv("USE_MEMORY", "false")
    # The user's own `.env` (config directory) is the test's own too, when a test reads `.env`.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    # In process, a store is the embedded one: a shared directory's server would outlive
    # the test (this process's lease lasts as long as it does). Subprocess tests whose
    # environment is built from scratch (`tests.support.cli`) share, as users do.
    monkeypatch.setenv("MEMORY_SHARE", "false")
    yield
    # Only what differs is put back: `os.environ.clear()` would unset every variable at once
    # while a daemon thread an earlier test left (chromadb's, the relevance model's) may be
    # reading the C environment, which is not safe across threads.
    for name in [name for name in os.environ if name not in saved]:
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


_import_module = importlib.import_module


@pytest.fixture(autouse=True)
def stores_closed() -> Iterator[None]:
    """Each test's stores are let go of after it: every test opens its own directory, and a
    worker that kept them all held over a thousand descriptors by the end of a full run.
    (A fixture wider than one test that opens a store in this process would see it closed
    after the first test: open it again in each test.)"""
    yield
    if "deep_research.memory.open" in sys.modules:  # never imported here: chromadb
        # Through the import system (as it was before any test patched it): a module a
        # daemon thread is still importing (memory's early open) is waited for, where
        # `sys.modules` hands it over half made.
        _import_module("deep_research.memory.open").close_stores()


@pytest.fixture(autouse=True)
def offline_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names never resolve, as offline, without asking the machine's resolver (IPs still work)."""
    real_resolve = netguard.resolve

    async def resolve(host: str, port: int) -> list[netguard.IPAddress]:
        if host == "localhost" or host.replace(".", "").isdigit() or ":" in host:
            return await real_resolve(host, port)
        raise httpx.ConnectError(f"cannot resolve {host}: offline test")

    monkeypatch.setattr(netguard, "resolve", resolve)


@pytest.fixture
def use_script(monkeypatch: pytest.MonkeyPatch) -> Callable[[Script], ScriptedChatModel]:
    """Route every role's model to one scripted chat model."""

    def install(script: Script) -> ScriptedChatModel:
        model = ScriptedChatModel(script=script)
        monkeypatch.setattr(chat_models, "chat_model", lambda context, role, report=False: model)
        return model

    return install


@pytest.fixture
def scripted_search(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedSearch]:
    provider = ScriptedSearch()
    monkeypatch.setattr("deep_research.search.step.make_provider", lambda name: provider)
    yield provider


@pytest.fixture
def pages(monkeypatch: pytest.MonkeyPatch) -> Iterator[PageServer]:
    """The local page server under a host name the environment allows, as for an intranet."""
    offline = netguard.resolve

    async def resolve(host: str, port: int) -> list[netguard.IPAddress]:
        if host == PAGES_HOST:
            return [ipaddress.ip_address("127.0.0.1")]
        return await offline(host, port)

    monkeypatch.setattr(netguard, "resolve", resolve)
    monkeypatch.setenv("FETCH_ALLOWED_HOSTS", PAGES_HOST)
    with PageServer() as server:
        yield server


@pytest.fixture
def tavily(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTavilyServer]:
    """The fake Tavily API, with the environment pointing the real client at it."""
    with FakeTavilyServer() as server:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", server.url)
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """One real PostgreSQL cluster for the session (tests/support/services/postgres.py)."""
    with postgres_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_dsn(postgres: PostgresCluster) -> Iterator[str]:
    """A fresh, empty database of the session's cluster: its DSN (with a password)."""
    dsn = postgres.create_database()
    yield dsn
    postgres.drop_database(dsn.rsplit("/", 1)[1])


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A fresh, empty redis-server of the test's own: its URL."""
    with redis_server() as server:
        yield server.url
