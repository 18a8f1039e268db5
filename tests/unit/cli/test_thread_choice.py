"""`cli.thread_choice`: the thread a research command runs, from its arguments and the logs."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import pytest
from rich.console import Console

from deep_research.cli.args import HOME, UsageError, research_parser
from deep_research.cli.runs import RunRecord, UnknownRunError
from deep_research.cli.thread_choice import ThreadToRun, chosen_thread, logs_elsewhere


def chosen(argv: list[str]) -> ThreadToRun:
    return chosen_thread(research_parser().parse_args(argv), Console(file=io.StringIO()))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--resume", "abc12345", "why?"], "not both"),
        (["--resume", "abc12345", "--follow-up", "abc12345"], "not both"),
        ([], "give a question"),
        (["  "], "give a question"),
        (["--follow-up", "abc12345"], "give the follow-up question, e.g. deep-research --fol"),
    ],
)
def test_a_run_needs_a_question_or_a_thread_not_both(argv: list[str], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        chosen(argv)


def test_resuming_an_unknown_thread_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownRunError, match="no run 'abc12345'"):
        chosen(["--resume", "abc12345"])


def test_a_new_question_is_a_new_thread_with_the_flags_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    thread = chosen(["--max-searches", "4", "--out", "a.md", "  why?  "])
    assert (thread.question, thread.out, thread.resume, thread.follow_up) == (
        "why?",
        "a.md",
        False,
        False,
    )
    assert len(thread.thread_id) == 8 and int(thread.thread_id, 16) >= 0
    assert thread.settings == {"max_searches_per_run": 4}


def test_a_resume_keeps_where_an_unsaved_report_was_asked_to_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    log = HOME.log_path("abc12345")
    log.parent.mkdir(parents=True)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "why?"}
    start |= {"out": "notes/why.md", "export": "html", "settings": {"fetch_top_n": 1}}
    log.write_text(json.dumps(start) + "\n")
    thread = chosen(["--resume", "abc12345", "--export", "docx"])
    assert (thread.thread_id, thread.question, thread.resume) == ("abc12345", "why?", True)
    assert (thread.out, thread.export) == ("notes/why.md", "docx")
    assert thread.settings == {"fetch_top_n": 1}


def test_earlier_logs_written_elsewhere_are_named_and_this_directorys_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    here = f"{socket.gethostname()}:{HOME.log_path('abc12345').absolute()}"
    record = RunRecord("abc12345", "why?", 1.0, logs=[here])
    assert logs_elsewhere(record) == []
    record.logs.extend(["other:/x/abc12345.jsonl", "other:/x/abc12345.jsonl"])
    lines = logs_elsewhere(record)
    assert lines[0] == "Earlier traffic logs of abc12345 stay where they were written:"
    assert lines[1:-1] == ["  other:/x/abc12345.jsonl"], "each log once"
    assert "deep-research replay abc12345 in that directory" in lines[-1]
