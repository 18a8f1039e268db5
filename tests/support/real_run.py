"""One `deep-research` run against the real model (`llama_server.py`), the fake Tavily API
and the local page server, as the slow e2e test and `benchmarks.real_model` run it.

The search API answers every query with articles on the page server named after it, so
what the run reads depends only on what the model asked; the pages are fetched for real
(loopback, `FETCH_ALLOW_PRIVATE`). The CLI gets an explicit environment, as `cli.py`'s do,
and the model's settings are the defaults a user gets (retries, time-outs, limits).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tests.support.cli import QUESTION, REPO, cli_command, traffic_records
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.tavily_server import FakeTavilyServer, slugify
from tests.support.langgraph_dev import SERVER_IDLE
from tests.support.llama_server import MODEL_ALIAS

MAX_SEARCHES = 6
# A whole run on 2 cores, with room for the default 600 s time-out of one runaway call.
RUN_TIMEOUT = 1800.0


class ModelServer(Protocol):
    """The real model's server (`LlamaServer`), or a scripted one standing in for it."""

    @property
    def base_url(self) -> str: ...

    def posts(self) -> list[int]:
        """The statuses of the chat requests it answered, in order."""
        ...


def pages_corpus(pages: PageServer) -> Any:
    """Three articles on the page server per query, named after it."""

    def corpus(query: str, max_results: int) -> list[dict[str, Any]]:
        slug = slugify(query)
        return [
            {
                "url": f"http://127.0.0.1:{pages.port}/article/{slug}-{i}",
                "title": f"{query} - source {i + 1}",
                "content": f"Source {i + 1} explains key facts about {query}.",
                "score": round(0.9 - 0.15 * i, 2),
            }
            for i in range(min(3, max_results))
        ]

    return corpus


def real_env(server: ModelServer, tavily: FakeTavilyServer, home: Path) -> dict[str, str]:
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "PYTHONPATH": str(REPO),
        "LLM_BASE_URL": server.base_url,
        "LLM_API_KEY": "sk-local",
        "LLM_MODEL": MODEL_ALIAS,
        "TAVILY_API_KEY": "tvly-local",
        "TAVILY_API_BASE_URL": tavily.url,
        "SEARCH_PROVIDER": "tavily",
        "FETCH_ALLOW_PRIVATE": "true",  # the pages are on 127.0.0.1
        "LANGSMITH_TRACING": "false",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "DEEP_RESEARCH_DOTENV": "0",
        # SmolLM2 often writes until its limit: 1,024 tokens keeps a run to minutes on CI's
        # two cores (the local default, 4,096 for the report, took 9.5 min at 7 tokens/s
        # while the cores were busy; docs/testing.md).
        "LLM_MAX_TOKENS": "1024",
        "USE_MEMORY": "false",
        "MEMORY_SERVER_IDLE": SERVER_IDLE,
    }


@dataclass
class RealRun:
    cwd: Path
    result: subprocess.CompletedProcess[str]
    seconds: float
    queries: list[str]  # what the search API was sent
    returned: set[str]  # every URL it answered with
    page_requests: list[str]  # the paths the page server served
    records: list[dict[str, Any]]  # the traffic log
    model_posts: list[int]  # the statuses of the chat requests the model server answered


def run_real(
    cwd: Path,
    server: ModelServer,
    question: str = QUESTION,
    *extra: str,
    env: dict[str, str | None] | None = None,
) -> RealRun:
    """`deep-research --no-clarify --max-searches 6 QUESTION` in `cwd`, piped; `env` sets
    (or, with None, removes) variables of `real_env`'s."""
    args = ["--no-clarify", "--max-searches", str(MAX_SEARCHES), *extra, question]
    with PageServer() as pages, FakeTavilyServer(pages_corpus(pages)) as tavily:
        before = len(server.posts())
        start = time.monotonic()
        result = subprocess.run(
            cli_command(*args),
            cwd=cwd,
            env=_with(real_env(server, tavily, cwd), env or {}),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        seconds = time.monotonic() - start
        queries, returned, served = tavily.queries, tavily.returned_urls, list(pages.requests)
    _, records = traffic_records(cwd)
    posts = server.posts()[before:]
    return RealRun(cwd, result, seconds, queries, returned, served, records, posts)


def _with(env: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    out = {**env, **{k: v for k, v in changes.items() if v is not None}}
    return {k: v for k, v in out.items() if changes.get(k, "") is not None}
