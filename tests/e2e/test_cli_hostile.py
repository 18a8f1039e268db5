"""Hostile input to the CLI's terminal and files: text that looks like rich markup (from the
user, the model or a stored log), thread ids that name paths, and traffic logs that are
cut short or hold records of the wrong shape.

The trustworthy outcome: every such text is shown literally (no crash, no live hyperlink),
no file outside `.deep_research/` is read or written, and a damaged log is read as far as
it can be, with the skipped lines reported once.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from deep_research.cli.main import main, print_summary
from deep_research.cli.plain import terminal_console
from deep_research.cli.runs import BadThreadIdError, Home, TrafficRecords, load_run, read_log
from deep_research.cli.session import Outcome, _answer
from deep_research.cli.traffic import TrafficLog
from deep_research.cli.view import ProgressView, Tracker
from deep_research.config.settings import load_context
from tests.support.brain import FAIL_MARKER, ResearchBrain, _texts
from tests.support.cli import (
    CLI_TIMEOUT,
    cli_env,
    read_until,
    run_cli,
    start_in_terminal,
    traffic_records,
)
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

# Rich markup a question, a page or a model could hold: a closing tag nothing opened (the
# MarkupError), a style, a live OSC 8 hyperlink, the bare closer, an unclosed bracket, an
# emoji code, and a raw escape sequence that is an OSC 8 hyperlink by itself.
MARKUP = [
    "[/usr/bin]",
    "[bold]loud",
    "[link=https://evil.example]x[/link]",
    "[/]",
    "unclosed [",
    ":warning:",
]
RAW_LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
QUESTION = "Heat pumps [/usr/bin] [bold]x [/] ["  # short enough for the `runs` column
OSC8 = "\x1b]8;"
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def todo_list() -> list[dict[str, str]]:
    todos = [{"content": f"plan {text}", "status": "pending"} for text in MARKUP]
    todos[0]["status"] = "completed"  # its mark `[x]` is itself a markup tag
    return todos


@dataclass
class MarkupBrain(ResearchBrain):
    """Clarifier questions, todos and research topics that look like rich markup; one
    researcher fails with an error text that quotes its topic (brackets and all)."""

    def __post_init__(self) -> None:
        self.topics = [f"topic {text}" for text in MARKUP] + [
            f"{FAIL_MARKER} [/usr/bin] {RAW_LINK}"
        ]

    def _clarify(self, body: dict[str, Any]) -> Reply:
        if any("Before I start" in t for t in _texts(body, "assistant")):
            decision: dict[str, Any] = {
                "need_clarification": False,
                "questions": [],
                "verification": "Researching [/usr/bin] [bold] as asked.",
            }
        else:
            questions = [f"question {text}" for text in MARKUP]
            decision = {"need_clarification": True, "questions": questions}
        return Reply(content=f"```json\n{json.dumps(decision)}\n```")

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        turns = [m for m in body["messages"] if m.get("tool_calls")]
        if not turns:  # write_todos must be called alone
            return Reply(tool_calls=[ToolCall("write_todos", {"todos": todo_list()})])
        if len(turns) == 1:
            return Reply(tool_calls=[ToolCall("research", {"topic": t}) for t in self.topics])
        return super()._orchestrate(body)  # the research results are in: the report


def screen_text(seen: bytes | bytearray) -> str:
    return CSI.sub("", bytes(seen).decode(errors="replace"))


@pytest.fixture(scope="module")
def markup_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    """One piped run whose question, todos, topics and researcher error hold markup."""
    cwd = tmp_path_factory.mktemp("markup")
    settings = ["--set", "max_researchers_per_turn=10", "--set", "max_research_calls_per_reply=10"]
    with ScriptedOpenAIServer(MarkupBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(cwd, cli_env(llm, tavily, cwd), *settings, QUESTION)
    yield cwd, result


def test_markup_in_question_todos_topics_and_errors_is_printed_literally_in_a_pipe(
    markup_run: tuple[Path, Any],
) -> None:
    _cwd, result = markup_run
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert OSC8 not in out and "\x1b" not in out
    assert "plan: " + "; ".join(t["content"] for t in todo_list()) in out
    for text in MARKUP:
        assert f"researching: topic {text}" in out, text
        assert re.search(rf"search \d+/25: topic {re.escape(text)} 0", out), text
    [failed] = [line for line in out.splitlines() if "research failed: " in line]
    assert f"{FAIL_MARKER} [/usr/bin]" in failed, failed
    assert "Report saved: reports/" in out


def test_runs_and_resume_work_for_a_directory_holding_markup_runs(
    markup_run: tuple[Path, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cwd, _result = markup_run
    log, _records = traffic_records(cwd)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert main(["runs"]) == 0
    _header, line = capsys.readouterr().out.splitlines()
    assert QUESTION in line and " done " in line
    assert main(["--resume", log.stem]) == 0
    out = capsys.readouterr().out
    assert f"Thread {log.stem} was already done" in out
    assert main(["replay", str(log)]) == 0
    out = capsys.readouterr().out
    assert "[link=https://evil.example]x[/link]" in out and OSC8 not in out


def test_stored_error_text_with_markup_does_not_break_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / ".deep_research" / "runs"
    runs.mkdir(parents=True)
    for n, text in enumerate([*MARKUP, RAW_LINK]):
        records = [
            {"t": 1.0 + n, "kind": "run", "action": "start", "question": f"q {text}"},
            {"t": 2.0 + n, "kind": "run", "action": "end", "status": "failed", "error": text},
        ]
        (runs / f"run{n}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.chdir(tmp_path)
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    for text in MARKUP:
        assert f"q {text}" in out and out.count(text) >= 2, text
    assert OSC8 not in out and "\x1b" not in out


def test_clarifier_questions_and_error_with_markup_are_shown_literally(tmp_path: Path) -> None:
    out = io.StringIO()
    console = terminal_console()
    console.file = out
    log = TrafficLog(tmp_path / "log.jsonl")
    questions = [*MARKUP, f"raw {RAW_LINK}"]
    request = {"error": "answer [/usr/bin] was [bold]bad", "round": "[/]", "questions": questions}
    try:
        asyncio.run(_answer(console, request, False, log))
    finally:
        log.close()
    text = out.getvalue()
    assert "answer [/usr/bin] was [bold]bad" in text and "(round [/]):" in text
    for number, question in enumerate(MARKUP, start=1):
        assert f"  {number}. {question}" in text
    assert "raw ]8;;https://evil.example" in text and "\x1b" not in text


def test_summary_shows_a_report_path_with_markup_literally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".deep_research" / "runs").mkdir(parents=True)
    (tmp_path / ".deep_research" / "runs" / "t1.jsonl").write_text("")
    console = terminal_console()
    console.file = io.StringIO()
    report = Path("reports/[/usr/bin]/[link=https://evil.example]x[/link].md")
    print_summary(console, Outcome("t1", {}, 1.0, report), load_context({}))
    assert f"Report saved: {report}" in console.file.getvalue()


def test_live_view_renders_markup_cells_literally_on_a_markup_console() -> None:
    # The tracker is a renderable: it must be safe even on a console that parses markup.
    tracker = Tracker("t1")
    tracker.handle({"event": "todos", "todos": todo_list()})
    for n, text in enumerate(MARKUP):
        tracker.handle({"event": "research_started", "id": n, "topic": text})
    tracker.handle({"event": "research_failed", "id": 0, "error": "[/] failed [bold]"})
    console = Console(file=io.StringIO(), width=200, markup=True, force_terminal=True)
    console.print(tracker)
    text = CSI.sub("", console.file.getvalue())
    assert OSC8 not in text
    for todo in todo_list():
        assert todo["content"] in text
    assert "[x] plan [/usr/bin]" in text and "[ ] plan [bold]loud" in text
    for text_ in MARKUP:
        assert text_ in text
    assert "[/] failed [bold]" in text
    view = ProgressView(tracker, console)
    view.live = False
    view.show({"event": "search", "cap": 5, "query": "[/usr/bin] [link=https://evil.example]x"})
    assert "[/usr/bin] [link=https://evil.example]x" in console.file.getvalue()


def test_terminal_run_shows_markup_questions_topics_and_answer_literally(tmp_path: Path) -> None:
    answer = "cold [/usr/bin] [link=https://evil.example]x[/link]"
    with ScriptedOpenAIServer(MarkupBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        settings = [
            "--set",
            "max_researchers_per_turn=10",
            "--set",
            "max_research_calls_per_reply=10",
        ]
        proc, leader = start_in_terminal(tmp_path, env, *settings, QUESTION)
        seen = bytearray()
        try:
            read_until(leader, b"> ", seen)
            os.write(leader, answer.encode() + b"\n")
            read_until(leader, b"traffic log", seen)
            read_until(leader, b"\n", seen)
            code = proc.wait(timeout=CLI_TIMEOUT)
        finally:
            os.close(leader)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    screen = screen_text(seen)
    assert code == 0, screen
    assert OSC8 not in bytes(seen).decode(errors="replace"), "no live hyperlink in the terminal"
    # The clarifier asks at most three questions.
    for number, text in enumerate(MARKUP[:3], start=1):
        assert f"{number}. question {text}" in screen, text
    for text in MARKUP:
        assert f" topic {text} " in screen and f"] plan {text}" in screen, text
    assert "Report saved:" in screen


# --- thread ids that name paths ------------------------------------------------------------

BAD_IDS = ["../../../victim", "/abs/path", "a/b", "..", "", "x" * 10_000, "ñandú", "a b", "a.b"]


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


# --- traffic logs cut short or of the wrong shape ------------------------------------------

# Each is one line appended to a good log (the start record is placed before it).


def record_line(**fields: Any) -> bytes:
    return json.dumps(fields, ensure_ascii=False).encode()


BAD_LINES: dict[str, bytes] = {
    "cut inside a UTF-8 character": record_line(t=9.0, kind="answer", answer="é")[:-3],
    "JSON array": b"[1, 2, 3]",
    "JSON number": b"42",
    "JSON string": b'"run"',
    "start record whose t is text": record_line(t="yesterday", kind="run", action="start"),
    "resume record whose settings is text": record_line(
        t=9.0, kind="run", action="resume", settings="fast"
    ),
    "resume record whose settings is a list": record_line(
        t=9.0, kind="run", action="resume", settings=[1]
    ),
    "run record without keys": record_line(kind="run"),
    "end record whose error is an object": record_line(
        t=9.0, kind="run", action="end", error={"a": 1}
    ),
    "record without kind": record_line(t=9.0),
}
# Records whose envelope is fine but whose fields are not: kept, shown as unreadable.
ODD_RECORDS = [
    {"t": 9.1, "kind": "progress", "event": "orchestrator_turn"},
    {"t": 9.2, "kind": "model_reply", "role": "x", "tokens_in": "many", "seconds": "slow"},
    {"t": 9.3, "kind": "interrupt", "questions": 5},
    {"t": 9.4, "kind": "model_reply", "tool_calls": [7]},
]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding one finished run (checkpoints, log, report) to damage copies of."""
    cwd = tmp_path_factory.mktemp("finished")
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(cwd, cli_env(llm, tavily, cwd), "--no-clarify", "heat pumps?")
    assert result.returncode == 0, result.stderr
    return cwd


@pytest.mark.parametrize("shape", BAD_LINES)
def test_a_damaged_traffic_log_is_read_by_runs_resume_and_replay(
    shape: str,
    finished_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cwd = tmp_path / "copy"
    shutil.copytree(finished_run, cwd)
    log, _ = traffic_records(cwd)
    good = log.read_bytes()
    bad = BAD_LINES[shape]
    odd = "".join(json.dumps(r) + "\n" for r in ODD_RECORDS).encode()
    if shape == "start record whose t is text":
        log.write_bytes(bad + b"\n" + good + odd)  # before the real start record
    else:
        log.write_bytes(good + odd + bad)  # last, without its newline: a cut write
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    warning = f"deep-research: skipped 1 unreadable line in .deep_research/runs/{log.name}"

    assert main(["runs"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [warning]
    assert log.stem in captured.out and " done " in captured.out

    assert main(["replay", str(log)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        warning.replace(".deep_research/runs/", str(log.parent) + "/")
    ]
    assert "run start     heat pumps?" in captured.out and "Totals" in captured.out
    assert captured.out.count("(unreadable record)") == len(ODD_RECORDS)

    assert main(["--resume", log.stem]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [warning], "reported once"
    assert "was already done" in captured.out and "searches      " in captured.out


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


def test_a_question_with_bytes_that_are_not_utf8_is_researched_with_them_replaced(
    tmp_path: Path,
) -> None:
    # Python hands a non-UTF-8 argv byte over as a lone surrogate; the OS gets the byte back.
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(tmp_path, cli_env(llm, tavily, tmp_path), "caf\udce9 heat pumps")
        asked = [m for body in llm.requests for m in body["messages"] if m["role"] == "user"]
    assert result.returncode == 0, result.stderr
    assert any("caf\ufffd heat pumps" in str(m["content"]) for m in asked)
