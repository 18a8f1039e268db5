"""DEEP_RESEARCH_CHECKPOINTS=postgresql://…: one run, three directories, a real PostgreSQL.

The CLI is killed (SIGKILL) in directory A with one researcher's findings checkpointed and
another's report request held open; `--resume` from directory B finishes it without the
finished researcher running again (only the database can have told it); `runs` in C lists
it. The DSN's password is in no output and no log.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support.brain import ResearchBrain, _texts, role_of
from tests.support.cli import CLI_TIMEOUT, QUESTION, REPO, cli_command, cli_env, run_cli
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import free_port
from tests.support.services import PostgresCluster

pytestmark = pytest.mark.slow

FINISHED = "heat pump efficiency in cold climates"
CUT = "heat pump installation costs"
PERSIST_DEADLINE = 30.0
VARIABLE = "DEEP_RESEARCH_CHECKPOINTS"


@dataclass
class HoldingBrain(ResearchBrain):
    """Holds CUT's report request open, once FINISHED has reported, until `release()`."""

    holding: bool = True
    reached: threading.Event = field(default_factory=threading.Event)
    _finished: asyncio.Event = field(default_factory=asyncio.Event)
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self, server: ScriptedOpenAIServer) -> None:
        self.holding = False
        server.loop.call_soon_threadsafe(self._released.set)

    async def _research(self, body: dict[str, Any]) -> Reply:
        topic, reporting = _texts(body, "user")[0], bool(_texts(body, "tool"))
        if self.holding and reporting and topic == FINISHED:
            reply = await super()._research(body)
            self._finished.set()
            return reply
        if self.holding and reporting and topic == CUT:
            await self._finished.wait()
            self.reached.set()
            await self._released.wait()
        return await super()._research(body)


def wait_until_persisted(dsn: str, text: str) -> None:
    """Poll PostgreSQL until a top-level task write containing `text` is saved."""
    query = "SELECT blob FROM checkpoint_writes WHERE checkpoint_ns = '' AND channel = 'messages'"
    deadline = time.monotonic() + PERSIST_DEADLINE
    while time.monotonic() < deadline:
        with psycopg.connect(dsn) as conn:
            exists = conn.execute("SELECT to_regclass('checkpoint_writes')").fetchone()
            blobs = [row[0] for row in conn.execute(query)] if exists and exists[0] else []
        if any(text.encode() in bytes(blob) for blob in blobs if blob):
            return
        time.sleep(0.05)  # polling another process's writes
    raise AssertionError(f"no checkpoint write containing {text!r} after {PERSIST_DEADLINE}s")


def held_run(
    cwd: Path, env: dict[str, str], brain: HoldingBrain, dsn: str
) -> subprocess.Popen[bytes]:
    """The CLI (output and errors in one pipe) once FINISHED's findings are in the
    database and CUT's report request is held open; killed if it never gets there."""
    proc = subprocess.Popen(
        cli_command(QUESTION),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert brain.reached.wait(CLI_TIMEOUT), "the run never reached CUT's report"
        wait_until_persisted(dsn, f"Findings on {FINISHED}")
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc


def researcher_topics(bodies: list[dict[str, Any]]) -> list[str]:
    return [_texts(b, "user")[0] for b in bodies if role_of(b) == "researcher"]


def test_killed_in_one_directory_resumed_from_another_listed_from_a_third(
    tmp_path: Path, postgres_dsn: str, postgres: PostgresCluster
) -> None:
    a, b, c = (tmp_path / name for name in ("a", "b", "c"))
    for directory in (a, b, c):
        directory.mkdir()
    brain = HoldingBrain(topics=[FINISHED, CUT])
    outputs = []
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = {**cli_env(llm, tavily, tmp_path), VARIABLE: postgres_dsn}
        proc = held_run(a, env, brain, postgres_dsn)
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        outputs.append(out.decode())
        before_kill = list(llm.requests)
        brain.release(llm)
        [log_a] = (a / ".deep_research" / "runs").glob("*.jsonl")
        thread = log_a.stem

        listed = run_cli(c, env, "runs")
        resumed = run_cli(b, env, "--resume", thread)
        after_kill = llm.requests[len(before_kill) :]
        listed_after = run_cli(c, env, "runs")
        replayed = run_cli(c, env, "replay", thread)
        outputs += [r.stdout + r.stderr for r in (listed, resumed, listed_after, replayed)]

    assert listed.returncode == 0, listed.stderr
    [row] = [line for line in listed.stdout.splitlines() if line.startswith(thread)]
    assert "stopped mid-run" in row and QUESTION[:40] in row, listed.stdout

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert FINISHED in researcher_topics(before_kill)
    assert FINISHED not in researcher_topics(after_kill), "a finished researcher ran again"
    assert CUT in researcher_topics(after_kill)
    [report] = (b / "reports").glob("*.md")
    assert FINISHED.replace(" ", "-") in report.read_text()
    assert CUT.replace(" ", "-") in report.read_text()
    # The traffic log stays where each session wrote it, and the resume says where.
    assert "Earlier traffic logs of" in resumed.stdout
    assert str(log_a.absolute()) in resumed.stdout.replace("\n", "")
    assert (b / ".deep_research" / "runs" / f"{thread}.jsonl").is_file()
    # `replay` in a third directory has no log to show, and says where they are.
    assert replayed.returncode == 2
    assert "its traffic logs stay where they were written" in replayed.stderr
    assert str(log_a.absolute()) in replayed.stderr
    assert str((b / ".deep_research" / "runs" / f"{thread}.jsonl").absolute()) in replayed.stderr

    [row] = [line for line in listed_after.stdout.splitlines() if line.startswith(thread)]
    assert " done " in row and str(b / "reports")[:30] in row, listed_after.stdout
    # Nothing was checkpointed locally: the database holds it all.
    assert not [p for d in (a, b, c) for p in d.rglob("checkpoints.sqlite")]
    logs = [p.read_text() for d in (a, b) for p in d.rglob("*.jsonl")]
    for text in outputs + logs:
        assert postgres.password not in text


def test_a_notebook_reads_a_cli_run_through_open_checkpointer(
    tmp_path: Path, postgres_dsn: str, postgres: PostgresCluster
) -> None:
    cli_dir, notebook_dir = tmp_path / "cli", tmp_path / "notebook"
    cli_dir.mkdir()
    notebook_dir.mkdir()
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = {**cli_env(llm, tavily, tmp_path), VARIABLE: postgres_dsn}
        done = run_cli(cli_dir, env, "--no-clarify", QUESTION)
    assert done.returncode == 0, done.stdout + done.stderr
    [log] = (cli_dir / ".deep_research" / "runs").glob("*.jsonl")
    script = (
        "import asyncio, os\n"
        "from deep_research.checkpoints import open_checkpointer\n"
        "from deep_research.graph import builder\n"
        "async def main():\n"
        "    async with open_checkpointer() as saver:\n"
        "        graph = builder.compile(checkpointer=saver)\n"
        "        config = {'configurable': {'thread_id': os.environ['THREAD']}}\n"
        "        state = await graph.aget_state(config)\n"
        "        print(state.values['final_report'].splitlines()[0])\n"
        "asyncio.run(main())\n"
    )
    notebook = subprocess.run(
        [sys.executable, "-c", script],
        cwd=notebook_dir,
        env={**env, "PYTHONPATH": str(REPO), "THREAD": log.stem},
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert notebook.returncode == 0, notebook.stderr
    [report] = (cli_dir / "reports").glob("*.md")
    assert notebook.stdout.strip() == report.read_text().splitlines()[0]
    assert list(notebook_dir.iterdir()) == [], "nothing local: the thread came from PostgreSQL"


@pytest.mark.parametrize("command", [["a question"], ["runs"], ["--resume", "abc12345"]])
def test_a_bad_or_unreachable_database_is_one_line_exit_2_without_the_password(
    tmp_path: Path, command: list[str]
) -> None:
    secret = "Pa55-never-shown"
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        bad = run_cli(tmp_path, {**env, VARIABLE: f"mysql://u:{secret}@h/db"}, *command)
        port = free_port()
        gone = f"postgresql://u:{secret}@127.0.0.1:{port}/runs"
        unreachable = run_cli(tmp_path, {**env, VARIABLE: gone}, *command)
        asked = len(llm.requests)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "DEEP_RESEARCH_CHECKPOINTS must be a postgresql://" in bad.stderr
    assert unreachable.returncode == 2, unreachable.stdout + unreachable.stderr
    assert f"cannot use PostgreSQL u@127.0.0.1:{port}/runs" in unreachable.stderr
    for result in (bad, unreachable):
        assert result.stderr.count("\n") == 1, result.stderr
        assert secret not in result.stdout + result.stderr
    assert asked == 0, "no model was asked before the checkpoints were checked"
    assert not (tmp_path / "reports").exists()


def test_doctor_names_where_checkpoints_go_without_the_password(
    tmp_path: Path, postgres_dsn: str, postgres: PostgresCluster
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        local = run_cli(tmp_path, env, "doctor")
        shared = run_cli(tmp_path, {**env, VARIABLE: postgres_dsn}, "doctor")
        wrong = postgres_dsn.replace(postgres.password, "wrong-Password-1")
        refused = run_cli(tmp_path, {**env, VARIABLE: wrong}, "doctor")
        bad = run_cli(tmp_path, {**env, VARIABLE: "redis://h/0"}, "doctor")
    db = postgres_dsn.rsplit("/", 1)[1]
    assert "ok    checkpoints: SQLite .deep_research/checkpoints.sqlite" in local.stdout
    assert (
        f"ok    checkpoints: PostgreSQL postgres@127.0.0.1:{postgres.port}/{db} is reachable"
        in shared.stdout
    ), shared.stdout
    [line] = [line for line in refused.stdout.splitlines() if "checkpoints:" in line]
    assert line.startswith("fail  checkpoints:") and "password authentication failed" in line
    assert refused.returncode == 1
    assert bad.returncode == 2 and "must be a postgresql://" in bad.stderr
    for result in (shared, refused):
        text = result.stdout + result.stderr
        assert postgres.password not in text and "wrong-Password-1" not in text


def test_ctrl_c_mid_run_on_postgres_stops_cleanly_and_resumes(
    tmp_path: Path, postgres_dsn: str
) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) while a researcher's
    call is in flight and the checkpointer's connection is busy: exit 130 with the resume
    line, and nothing of psycopg's on the way out (no "error ignored in rollback", no
    traceback); the resume finishes the run."""
    brain = HoldingBrain(topics=[FINISHED, CUT])
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = {**cli_env(llm, tavily, tmp_path), VARIABLE: postgres_dsn}
        proc = held_run(tmp_path, env, brain, postgres_dsn)
        try:
            os.killpg(proc.pid, signal.SIGINT)
            out, _ = proc.communicate(timeout=CLI_TIMEOUT)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
        brain.release(llm)
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        resumed = run_cli(tmp_path, env, "--resume", log.stem)
    stopped = out.decode()
    assert proc.returncode == 130, stopped
    assert f"Resume with: deep-research --resume {log.stem}" in stopped
    for noise in ("error ignored", "Traceback", "pipeline mode", "psycopg"):
        assert noise not in stopped, stopped
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "error ignored" not in resumed.stdout + resumed.stderr
