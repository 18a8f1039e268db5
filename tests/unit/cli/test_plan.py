"""`cli.plan`: the terminal's plan review, from the answer typed to the resume value."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from deep_research.cli import plan

REQUEST = {"round": 2, "plan": [{"content": "one", "status": "completed"}, {"content": "two"}]}


def console_answering(*answers: str) -> tuple[Console, io.StringIO]:
    """A console whose `input` returns `answers` in turn, then raises EOFError as stdin would."""
    out = io.StringIO()
    console = Console(file=out, width=200)
    pending: Iterator[str] = iter(answers)

    def read(prompt: str = "") -> str:
        out.write(prompt)
        try:
            return next(pending)
        except StopIteration:
            raise EOFError from None

    console.input = read  # type: ignore[method-assign]
    return console, out


def test_show_numbers_the_items_with_their_marks_after_the_error() -> None:
    console, out = console_answering()
    plan.show(console, {**REQUEST, "error": "that plan was empty"})
    text = out.getvalue()
    assert text.index("that plan was empty") < text.index("(round 2)")
    assert "  1. [x] one" in text and "  2. [ ] two" in text


async def test_nobody_at_a_terminal_runs_the_plan_as_is() -> None:
    console, out = console_answering("never read")
    assert await plan.ask(console, REQUEST, interactive=False) == "ok"
    assert "stdin is not a terminal" in out.getvalue() and "> " not in out.getvalue()


@pytest.mark.parametrize(("answer", "value"), [("", "ok"), (" Y ", "ok"), ("yes", "ok")])
async def test_enter_or_yes_approves(answer: str, value: str) -> None:
    assert await plan.ask(console_answering(answer)[0], REQUEST, interactive=True) == value


async def test_anything_else_is_feedback_and_end_of_input_approves() -> None:
    console, _ = console_answering("  fewer items please ")
    assert await plan.ask(console, REQUEST, True) == {"feedback": "fewer items please"}
    assert await plan.ask(console_answering()[0], REQUEST, True) == "ok"


async def test_without_an_editor_the_new_plan_is_typed_line_by_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EDITOR", raising=False)
    console, out = console_answering("e", " first ", "second", "", "never read")
    assert await plan.ask(console, REQUEST, True) == ["first", "second"]
    assert "1. " in out.getvalue() and "3. " in out.getvalue()


async def test_an_empty_edit_keeps_the_plan_and_asks_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EDITOR", raising=False)
    console, out = console_answering("edit", "", "y")
    assert await plan.ask(console, REQUEST, True) == "ok"
    assert "The plan is unchanged." in out.getvalue()
    assert out.getvalue().count(plan.PROMPT) == 2


def editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text(f"import sys\npath = sys.argv[1]\n{body}\n")
    return f"{sys.executable} {script}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "result", "says"),
    [
        ("open(path, 'a').write('# note\\n  three  \\n')", ["one", "two", "three"], ""),
        ("raise SystemExit(3)", [], "The editor exited with 3."),
    ],
)
def test_the_editor_sees_the_plan_and_its_lines_come_back(
    body: str, result: list[str], says: str, tmp_path: Path
) -> None:
    console, out = console_answering()
    edited = plan._in_editor(console, editor(tmp_path, body), ["one", "two"])
    assert edited == result and says in out.getvalue()


def test_an_editor_that_cannot_start_is_named(tmp_path: Path) -> None:
    console, out = console_answering()
    assert plan._in_editor(console, str(tmp_path / "no-such-editor"), ["one"]) == []
    assert "Could not start the editor" in out.getvalue()
