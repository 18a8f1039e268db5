"""Nothing paid is lost: a real `deep-research` process killed after its searches were
answered, while it reads a page, resumes with every answer it had and sends none again.

The fake Tavily API answers with pages on the local page server; one page is held open so
the kill lands while the researchers are reading pages (their searches answered and saved
as durable tasks). `--resume` then ends with exit 0 and a report citing pages found before
the kill, and the API sees no query twice: with the CLI's SQLite checkpoints and with
PostgreSQL (resumed from another directory).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support.brain import ResearchBrain
from tests.support.cli import CLI_TIMEOUT, QUESTION, cli_command, cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.tavily_server import FakeTavilyServer, slugify

pytestmark = pytest.mark.slow  # starts subprocesses and servers

HELD = "/slow"


def pages_corpus(pages: PageServer) -> Any:
    """Results on the local page server; the first topic's first page is held open."""

    def corpus(query: str, max_results: int) -> list[dict[str, Any]]:
        slug = slugify(query)
        results = []
        for i in range(max(0, max_results)):
            held = i == 0 and "efficiency" in query
            path = f"{HELD}?{slug}" if held else f"/article/{slug}-{i}"
            results.append(
                {
                    "url": f"http://127.0.0.1:{pages.port}{path}",
                    "title": f"{query} - source {i + 1}",
                    "content": f"Source {i + 1} explains key facts about {query}.",
                    "score": max(round(0.9 - 0.15 * i, 2), 0.01),
                }
            )
        return results

    return corpus


def saved(read_blobs: Any, text: bytes) -> None:
    """Wait until a checkpoint write holding `text` is stored (another process writes it)."""
    deadline = time.monotonic() + CLI_TIMEOUT
    while time.monotonic() < deadline:
        if any(text in bytes(blob) for blob in read_blobs() if blob):
            return
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint write holding {text!r}")


def sqlite_blobs(path: Path) -> Any:
    def read() -> list[bytes]:
        if not path.exists():
            return []
        try:
            with sqlite3.connect(path) as db:
                return [row[0] for row in db.execute("SELECT value FROM writes")]
        except sqlite3.OperationalError:  # not created yet, or busy
            return []

    return read


def postgres_blobs(dsn: str) -> Any:
    def read() -> list[bytes]:
        with psycopg.connect(dsn) as conn:
            exists = conn.execute("SELECT to_regclass('checkpoint_writes')").fetchone()
            if not exists or not exists[0]:
                return []
            return [row[0] for row in conn.execute("SELECT blob FROM checkpoint_writes")]

    return read


def kill_while_reading_then_resume(
    tmp_path: Path, extra_env: dict[str, str], blobs: Any, resume_in: Path
) -> tuple[subprocess.CompletedProcess[str], list[str], str]:
    run_in = tmp_path / "run"
    run_in.mkdir()
    with (
        PageServer() as pages,
        ScriptedOpenAIServer(ResearchBrain(queries_per_search=2)) as llm,
        FakeTavilyServer(corpus=pages_corpus(pages)) as tavily,
    ):
        env = {**cli_env(llm, tavily, tmp_path), "FETCH_ALLOW_PRIVATE": "true", **extra_env}
        proc = subprocess.Popen(
            cli_command("--no-clarify", "--max-searches", "4", QUESTION),
            cwd=run_in,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + CLI_TIMEOUT
            while not any(r.startswith(HELD) for r in pages.requests):
                assert time.monotonic() < deadline and proc.poll() is None, "no page was held"
                time.sleep(0.02)
            # Every search the API answered is stored (its results name its query's slug).
            for query in tavily.queries:
                saved(blobs, slugify(query).encode())
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        before = list(tavily.queries)
        pages.release()
        [log] = (run_in / ".deep_research" / "runs").glob("*.jsonl")
        if resume_in != run_in:
            resume_in.mkdir()
        resumed = run_cli(resume_in, env, "--resume", log.stem)
        sent = list(tavily.queries)
    assert before, "searches were answered before the kill"
    return resumed, sent, "\n".join(before)


def report_of(directory: Path) -> str:
    [report] = (directory / "reports").glob("*.md")
    return report.read_text()


def test_sqlite_a_run_killed_while_reading_pages_resumes_with_its_searches(
    tmp_path: Path,
) -> None:
    database = tmp_path / "run" / ".deep_research" / "checkpoints.sqlite"
    resumed, sent, before = kill_while_reading_then_resume(
        tmp_path, {}, sqlite_blobs(database), tmp_path / "run"
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(sent) == len(set(sent)), f"a query was sent twice: {sent}"
    report = report_of(tmp_path / "run")
    assert "/article/" in report, "the report cites pages found before the kill"
    assert "status        complete" in resumed.stdout, resumed.stdout


def test_postgres_a_run_killed_in_one_directory_resumes_in_another_with_its_searches(
    tmp_path: Path, postgres_dsn: str
) -> None:
    resumed, sent, before = kill_while_reading_then_resume(
        tmp_path,
        {"DEEP_RESEARCH_CHECKPOINTS": postgres_dsn},
        postgres_blobs(postgres_dsn),
        tmp_path / "elsewhere",
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(sent) == len(set(sent)), f"a query was sent twice: {sent}"
    assert "/article/" in report_of(tmp_path / "elsewhere")
