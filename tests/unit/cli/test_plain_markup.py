"""Text that looks like rich markup (from the user, the model or a stored log) is shown
literally by the CLI's console, its live view and its summary: no crash, no live hyperlink."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from deep_research.cli.main import main
from deep_research.cli.plain import terminal_console
from deep_research.cli.research import print_summary
from deep_research.cli.session import Outcome, _answer
from deep_research.cli.traffic import TrafficLog
from deep_research.cli.view import ProgressView, Tracker
from deep_research.config.settings import load_context
from deep_research.state import CitationCheck
from tests.support.hostile import CSI, MARKUP, OSC8, RAW_LINK, todo_list


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
    check = dict.fromkeys(CitationCheck.__annotations__, 0)
    values = {"status": "complete", "citation_check": check}
    print_summary(console, Outcome("t1", values, 1.0, report), load_context({}))
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
