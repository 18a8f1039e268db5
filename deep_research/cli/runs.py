"""Where runs live on disk, what each one was asked, and how far it got.

`.deep_research/checkpoints.sqlite` holds the graph's checkpoints (`AsyncSqliteSaver`);
`.deep_research/runs/<thread>.jsonl` is each run's traffic log. Its first line records the
question and the settings given on the command line, which is all `--resume` needs: the
settings are per run in LangGraph, not stored in checkpoints. With
DEEP_RESEARCH_CHECKPOINTS=postgresql://… both the checkpoints and the run records (the
log's `run` and `progress` records) are in that database instead, for every directory
(`RunSource`, docs/checkpoints.md); the traffic log stays where it was written.

A thread id names a file, so it is checked against one pattern wherever it is read: a
`--resume ../../x` must not read or append to a log outside `.deep_research/`. A log is
read tolerantly: a run killed mid-write, a disk that filled up or a hand edit leaves bad
bytes or records of the wrong shape, and those are skipped and counted, never fatal.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deep_research.checkpoints.target import Target, target_from
from deep_research.cli.counts import totals
from deep_research.errors import DeepResearchError, ReadableError
from deep_research.text.controls import without_controls

if TYPE_CHECKING:
    from deep_research.checkpoints.postgres import RunList

# New threads are `uuid4().hex[:8]`; the pattern leaves room for ids given by other clients.
THREAD_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
THREAD_ID_RULE = "a thread id is 1 to 64 letters, digits, '-' or '_'"
RUN_ACTIONS = ("start", "resume", "follow_up", "end")  # follow_up: a new question on it


class BadThreadIdError(DeepResearchError, ValueError):
    """A thread id that does not match `THREAD_ID` (it could name a path elsewhere)."""


def check_thread_id(thread_id: str) -> str:
    """`thread_id` itself, or `BadThreadIdError` naming the rule."""
    if not THREAD_ID.fullmatch(thread_id):
        shown = thread_id if len(thread_id) <= 70 else thread_id[:69] + "…"
        raise BadThreadIdError(f"bad thread id {shown!r}: {THREAD_ID_RULE}")
    return thread_id


class UnknownRunError(ReadableError, LookupError):
    """No run with that thread id exists under this directory's `.deep_research/`."""


@dataclass(frozen=True)
class Home:
    """The CLI's state directory (`.deep_research/` in the working directory)."""

    root: Path

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints.sqlite"

    def log_path(self, thread_id: str) -> Path:
        return self.root / "runs" / f"{check_thread_id(thread_id)}.jsonl"

    def target(self) -> Target:
        """Where checkpoints go: this directory's SQLite file unless the environment says."""
        return target_from(sqlite=self.checkpoints)

    def runs(self) -> RunSource:
        return RunSource(self, self.target())


class RunSource:
    """Where run records are read: this directory's traffic logs, or PostgreSQL's run list."""

    def __init__(self, home: Home, target: Target) -> None:
        from deep_research.checkpoints.postgres import RunList  # psycopg: only for it

        self.home, self.target = home, target
        self.shared: RunList | None = RunList(target) if target.shared else None

    def where(self) -> str:
        return f"{self.home.root}/" if self.shared is None else self.target.describe()

    def check(self) -> None:
        """Reach the shared run list (creating its table), so a run fails before it starts."""
        if self.shared is not None:
            self.shared.setup()

    def log(self, thread_id: str) -> TrafficRecords | None:
        """A thread's run records, None when there is no such run."""
        if self.shared is None:
            path = self.home.log_path(thread_id)
            return read_log(path) if path.is_file() else None
        values = self.shared.records(check_thread_id(thread_id))
        return None if values is None else _records(values, self.target.describe())

    def records(self, thread_id: str) -> list[dict[str, Any]]:
        log = self.log(thread_id)
        return log.records if log is not None else []

    def thread_ids(self) -> list[str]:
        if self.shared is None:
            paths = (self.home.root / "runs").glob("*.jsonl")
            # Not a log this CLI wrote, and no thread it could resume: left out.
            return [p.stem for p in paths if THREAD_ID.fullmatch(p.stem) and p.is_file()]
        return [t for t in self.shared.thread_ids() if THREAD_ID.fullmatch(t)]


@dataclass
class RunRecord:
    """What the traffic log says about one thread: its question, settings and outcome."""

    thread_id: str
    question: str
    started: float
    settings: dict[str, Any] = field(default_factory=dict)
    report: str | None = None
    error: str | None = None
    skipped: str | None = None  # "skipped N unreadable lines in PATH", when any were
    searches: int = 0  # sent, in every session (as `cli/counts.py` counts, like the rest)
    cost: float | None = 0.0  # USD its logged model calls and searches cost; None: unknown
    sources: int | None = None  # the saved report's Sources list; None: no report saved
    # Where the report was asked to go (`--out`) and as what (`--export`): a resumed run
    # writes there too unless told otherwise. The latest session's that gave one wins.
    out: str | None = None
    export: str | None = None
    # Each session's traffic log, as `host:path`, where it was written (they stay there).
    logs: list[str] = field(default_factory=list)
    # Each question asked on the thread (the first, then each `--follow-up`), with the
    # report saved for it (None: none yet).
    answers: list[tuple[str, str | None]] = field(default_factory=list)

    @property
    def latest_question(self) -> str:
        """The question the thread's last session worked on (the one `--resume` goes on with)."""
        return self.answers[-1][0] if self.answers else self.question


def warn_skipped(record: RunRecord) -> None:
    """Say once, on stderr, that a run's traffic log had lines that could not be read."""
    if record.skipped:
        print(f"deep-research: {without_controls(record.skipped)}", file=sys.stderr)


@dataclass(frozen=True)
class TrafficRecords:
    """A traffic log's readable records, and how many lines were skipped as unreadable."""

    path: Path | str  # the log file, or the shared run list it was read from
    records: list[dict[str, Any]]
    skipped: int = 0

    def warning(self) -> str | None:
        if not self.skipped:
            return None
        lines = "line" if self.skipped == 1 else "lines"
        return f"skipped {self.skipped} unreadable {lines} in {self.path}"


# A record's time: seconds since 1970, before the year 2242 (datetime takes it).
MAX_TIME = 2**33


def read_log(path: Path) -> TrafficRecords:
    """Every well-formed record of a traffic log; bad bytes and bad lines are not fatal."""
    # A kill can cut a line inside a multi-byte character: that line fails to parse below.
    text = path.read_bytes().decode("utf-8", errors="replace")
    values = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except (ValueError, RecursionError):  # JSONDecodeError, a 5,000-digit int, deep nesting
            values.append(None)
    return _records(values, path)


def _records(values: list[Any], where: Path | str) -> TrafficRecords:
    """The well-formed ones of decoded records (a file's lines or a database's rows)."""
    records = [value for value in values if _well_formed(value)]
    return TrafficRecords(where, records, len(values) - len(records))


def _well_formed(record: Any) -> bool:
    """Every record is an object with a `kind` and a time `t`; a run record's fields, which
    `runs` and `--resume` rely on, have the types `TrafficLog` writes."""
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        return False
    if not isinstance(record.get("t"), int | float) or isinstance(record["t"], bool):
        return False
    if not 0 <= record["t"] < MAX_TIME:  # a date `runs` can print (inf and nan fail too)
        return False
    if record["kind"] != "run":
        return True
    optional_text = all(
        isinstance(record.get(key), str | None)
        for key in ("question", "report", "error", "out", "export", "log", "host")
    )
    return (
        record.get("action") in RUN_ACTIONS
        and optional_text
        and isinstance(record.get("settings", {}), dict)
    )


def run_record(log: TrafficRecords, thread_id: str) -> RunRecord:
    records = log.records
    starts = [r for r in records if r.get("kind") == "run" and r.get("action") == "start"]
    if not starts:
        raise UnknownRunError(f"run {thread_id!r} has no start record in its traffic log")
    first = starts[0]
    record = RunRecord(thread_id, first.get("question") or "", first["t"], skipped=log.warning())
    counted = totals(records)
    record.searches, record.cost, record.sources = counted.searches, counted.usd, counted.sources
    record.answers.append((record.question, None))
    for entry in records:
        if entry.get("kind") != "run":
            continue
        if entry.get("action") == "follow_up":
            record.answers.append((entry.get("question") or "", None))
        if entry.get("action") in ("start", "resume", "follow_up"):
            # A resume may change settings (say, another model); later ones win.
            record.settings.update(entry.get("settings") or {})
            record.out = entry.get("out") or record.out
            record.export = entry.get("export") or record.export
            if entry.get("log"):
                record.logs.append(f"{entry.get('host') or '?'}:{entry['log']}")
        elif entry.get("action") == "end":
            record.report = entry.get("report") or record.report
            record.error = entry.get("error")
            if entry.get("report"):  # the latest question's answer (a resume's too)
                record.answers[-1] = (record.answers[-1][0], entry["report"])
    return record


def load_run(home: Home, thread_id: str) -> RunRecord:
    source = home.runs()
    log = source.log(check_thread_id(thread_id))
    if log is None:
        known = ", ".join(r.thread_id for r in list_runs(home)[-5:]) or "none yet"
        raise UnknownRunError(
            f"no run {thread_id!r} in {source.where()} (recent: {known}); see `deep-research runs`"
        )
    return run_record(log, thread_id)


def earlier_thread_hint(home: Home, thread_id: str) -> str:
    """What the user can do with the earlier thread memory names first: one logged in this
    directory can be replayed and resumed; one from another directory or the Agent Server
    cannot (its checkpoints are not here), but memory shows what it found."""
    if THREAD_ID.fullmatch(thread_id) and home.log_path(thread_id).is_file():
        return (
            f"  deep-research replay {thread_id} shows it, "
            f"deep-research --resume {thread_id} continues it if it stopped"
        )
    return "  it ran in another folder: deep-research memory search shows what it found"


def list_runs(home: Home) -> list[RunRecord]:
    """Every run with readable records (its traffic log, or the shared list's), oldest first."""
    source = home.runs()
    runs = []
    for thread_id in source.thread_ids():
        log = source.log(thread_id)
        if log is None:
            continue
        try:
            runs.append(run_record(log, thread_id))
        except UnknownRunError:
            continue  # records without a start are not a run we can resume or list
    return sorted(runs, key=lambda run: run.started)
