"""Thread ids that name paths are refused by every reader, touching nothing; damaged traffic
log lines are skipped, counted and reported, and bad bytes inside a record replaced."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from deep_research.cli.main import main
from deep_research.cli.runs import BadThreadIdError, Home, TrafficRecords, load_run, read_log
from tests.support.hostile import BAD_IDS, BAD_LINES


@pytest.mark.parametrize("bad", BAD_IDS, ids=lambda s: repr(s[:20]))
def test_resume_with_a_thread_id_naming_a_path_is_refused_and_touches_nothing(
    bad: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    # `.deep_research/runs/../../../victim.jsonl` is `tmp_path/victim.jsonl`; it looks like
    # a run's log, so a reader that followed the path would use it and append to it.
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "victim", "settings": {}}
    victims = [tmp_path / "victim.jsonl", Path("/abs/path.jsonl")]
    victim = victims[0]
    victim.write_text(json.dumps(start) + "\n")
    before = victim.read_bytes(), victim.stat().st_mtime_ns
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert main(["--resume", bad]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "a thread id is 1 to 64 letters, digits, '-' or '_'" in line
    assert len(line) < 300, "a 10,000-character id is not echoed whole"
    assert (victim.read_bytes(), victim.stat().st_mtime_ns) == before
    assert not (cwd / ".deep_research").exists() and not victims[1].exists()


@pytest.mark.parametrize("bad", BAD_IDS, ids=lambda s: repr(s[:20]))
def test_every_reader_of_a_thread_id_checks_it(bad: str, tmp_path: Path) -> None:
    home = Home(tmp_path / ".deep_research")
    with pytest.raises(BadThreadIdError, match="1 to 64 letters"):
        home.log_path(bad)
    with pytest.raises(BadThreadIdError):
        load_run(home, bad)
    assert home.log_path("a1b2c3d4-_X") == home.root / "runs" / "a1b2c3d4-_X.jsonl"


def test_runs_ignores_a_log_whose_name_is_not_a_thread_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / ".deep_research" / "runs"
    runs.mkdir(parents=True)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "q"}
    for name in ("good1", "bad name", "dotted.name"):
        (runs / f"{name}.jsonl").write_text(json.dumps(start) + "\n")
    monkeypatch.chdir(tmp_path)
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert "good1" in out and "bad name" not in out and "dotted" not in out


def test_bad_bytes_inside_a_record_are_replaced_and_the_record_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"t": 9.0, "kind": "answer", "answer": "a\xff\xfeb"}\n')
    assert read_log(path) == TrafficRecords(
        path, [{"t": 9.0, "kind": "answer", "answer": "a\ufffd\ufffdb"}]
    )


def test_read_log_counts_what_it_skips(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in BAD_LINES.values()) + b"\n\n")
    log = read_log(path)
    assert log == TrafficRecords(path, [], len(BAD_LINES))
    assert log.warning() == f"skipped {len(BAD_LINES)} unreadable lines in {path}"


def test_out_and_export_are_read_from_the_latest_session_that_gave_them(tmp_path: Path) -> None:
    home = Home(tmp_path)
    log = home.log_path("t1")
    log.parent.mkdir(parents=True)
    records = [
        {"t": 1.0, "kind": "run", "action": "start", "question": "q", "out": "a.md"},
        {"t": 2.0, "kind": "run", "action": "resume", "export": "html"},
        {"t": 3.0, "kind": "run", "action": "resume", "out": "b/"},
        # A hand-edited line of the wrong shape is skipped, never taken as a path.
        {"t": 4.0, "kind": "run", "action": "resume", "out": ["/etc/passwd"]},
    ]
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    record = load_run(home, "t1")
    assert (record.out, record.export) == ("b/", "html")
    assert record.skipped == f"skipped 1 unreadable line in {log}"


def test_a_line_with_a_huge_number_or_a_time_no_date_can_show_is_skipped_and_runs_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """json.loads raises a plain ValueError for a 5,000-digit integer; datetime refuses 1e20."""
    runs = tmp_path / ".deep_research" / "runs"
    runs.mkdir(parents=True)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "q"}
    lines = [
        '{"t": ' + "9" * 5_000 + ', "kind": "run", "action": "start", "question": "q"}',
        json.dumps({**start, "t": 1e20}),
        json.dumps({**start, "t": -1e15}),
        '{"t": Infinity, "kind": "run", "action": "start", "question": "q"}',
        json.dumps(start),
    ]
    (runs / "good1.jsonl").write_text("\n".join(lines) + "\n")
    assert read_log(runs / "good1.jsonl").skipped == 4
    monkeypatch.chdir(tmp_path)
    assert main(["runs"]) == 0
    assert "good1" in capsys.readouterr().out
