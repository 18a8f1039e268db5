"""Where runs live on disk, what each one was asked, and how far it got.

`.deep_research/checkpoints.sqlite` holds the graph's checkpoints (`AsyncSqliteSaver`);
`.deep_research/runs/<thread>.jsonl` is each run's traffic log. Its first line records the
question and the settings given on the command line, which is all `--resume` needs: the
settings are per run in LangGraph, not stored in checkpoints.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

Status = Literal["done", "waiting for an answer", "stopped mid-run", "not started"]


class UnknownRunError(LookupError):
    """No run with that thread id exists under this directory's `.deep_research/`."""


@dataclass(frozen=True)
class Home:
    """The CLI's state directory (`.deep_research/` in the working directory)."""

    root: Path

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints.sqlite"

    def log_path(self, thread_id: str) -> Path:
        return self.root / "runs" / f"{thread_id}.jsonl"


@dataclass
class RunRecord:
    """What the traffic log says about one thread: its question, settings and outcome."""

    thread_id: str
    question: str
    started: float
    settings: dict[str, Any] = field(default_factory=dict)
    report: str | None = None
    error: str | None = None


def read_log(path: Path) -> list[dict[str, Any]]:
    """Every record of a traffic log; a line cut short by a kill is skipped, not fatal."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def run_record(records: list[dict[str, Any]], thread_id: str) -> RunRecord:
    starts = [r for r in records if r.get("kind") == "run" and r.get("action") == "start"]
    if not starts:
        raise UnknownRunError(f"run {thread_id!r} has no start record in its traffic log")
    first = starts[0]
    record = RunRecord(thread_id, first.get("question", ""), first["t"])
    for entry in records:
        if entry.get("kind") != "run":
            continue
        if entry.get("action") in ("start", "resume"):
            # A resume may change settings (say, another model); later ones win.
            record.settings.update(entry.get("settings") or {})
        elif entry.get("action") == "end":
            record.report = entry.get("report") or record.report
            record.error = entry.get("error")
    return record


def load_run(home: Home, thread_id: str) -> RunRecord:
    path = home.log_path(thread_id)
    if not path.is_file():
        known = ", ".join(r.thread_id for r in list_runs(home)[-5:]) or "none yet"
        raise UnknownRunError(
            f"no run {thread_id!r} in {home.root}/ (recent: {known}); see `deep-research runs`"
        )
    return run_record(read_log(path), thread_id)


def list_runs(home: Home) -> list[RunRecord]:
    """Every run with a readable traffic log, oldest first."""
    runs = []
    for path in (home.root / "runs").glob("*.jsonl"):
        try:
            runs.append(run_record(read_log(path), path.stem))
        except UnknownRunError:
            continue  # a log without a start line is not a run we can resume or list
    return sorted(runs, key=lambda run: run.started)


@asynccontextmanager
async def durable_graph(home: Home) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    """The research graph checkpointing to `.deep_research/checkpoints.sqlite`."""
    # Imported here: the graph costs ~2 s, and `--help` or a usage error should not wait.
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from deep_research.graph import builder

    home.root.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(home.checkpoints)) as saver:
        yield builder.compile(checkpointer=saver)


async def status_of(graph: CompiledStateGraph[Any, Any, Any, Any], thread_id: str) -> Status:
    state = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    if state.interrupts:
        return "waiting for an answer"
    if state.next:
        return "stopped mid-run"
    if state.values.get("final_report"):
        return "done"
    return "not started"
