"""cli.runs with DEEP_RESEARCH_CHECKPOINTS: the run list read from a real PostgreSQL, tolerantly."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from deep_research.checkpoints.postgres import RunList
from deep_research.checkpoints.target import VARIABLE, target_from
from deep_research.cli.runs import Home, UnknownRunError, list_runs, load_run

pytestmark = pytest.mark.slow


def _insert(dsn: str, rows: list[tuple[str, object]]) -> None:
    RunList(target_from({VARIABLE: dsn})).setup()
    with psycopg.connect(dsn, autocommit=True) as conn:
        for thread_id, record in rows:
            conn.execute(
                "INSERT INTO deep_research_runs (thread_id, record) VALUES (%s, %s::jsonb)",
                (thread_id, record if isinstance(record, str) else json.dumps(record)),
            )


def test_runs_come_from_the_database_not_the_directory(
    tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, postgres_dsn)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "shared q"}
    search = {"t": 2.0, "kind": "progress", "event": "search", "usd": 0.008}
    _insert(
        postgres_dsn,
        [
            ("t1", start),
            ("t1", search),
            ("t1", {"t": 3.0, "kind": "run", "action": "resume", "log": "/a/x.jsonl"}),
            # A shared database is outside input: wrong shapes are skipped and counted.
            ("t1", [1, 2]),
            ("t1", {"t": "soon", "kind": "run"}),
            ("t1", {"t": 4.0, "kind": "run", "action": "end", "report": ["/etc/passwd"]}),
            ("t1", '{"t": ' + "9" * 5_000 + ', "kind": "run"}'),  # jsonb keeps any length
            ("t1", {**start, "t": 1e20}),  # no date runs could print
            ("../../etc", start),  # not a thread id this CLI could have written
            ("nostart", {"t": 5.0, "kind": "progress", "event": "search"}),
        ],
    )
    home = Home(tmp_path / ".deep_research")
    [run] = list_runs(home)
    assert (run.thread_id, run.question, run.searches) == ("t1", "shared q", 1)
    assert run.report is None and run.logs == ["?:/a/x.jsonl"]
    assert run.skipped is not None and run.skipped.startswith("skipped 5 unreadable lines in ")
    assert "PostgreSQL postgres@127.0.0.1" in run.skipped
    assert load_run(home, "t1").question == "shared q"
    with pytest.raises(UnknownRunError, match="no run 'other' in PostgreSQL postgres@"):
        load_run(home, "other")
    assert not (tmp_path / ".deep_research").exists(), "nothing read from or written here"
