"""The follow-up prompt after a report: each line typed is a question, until Enter alone,
Ctrl-D, Ctrl-C or the cap."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console

from deep_research.cli import follow_ups


def _console(lines: list[str | BaseException]) -> Console:
    """A console whose `input` returns (or raises) each of `lines` in turn."""
    console = Console(file=io.StringIO(), width=200)
    answers: Iterator[str | BaseException] = iter(lines)

    def typed(prompt: str = "", **_: object) -> str:
        console.print(prompt, end="")
        answer = next(answers)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    console.input = typed  # type: ignore[method-assign]
    return console


@pytest.mark.parametrize("end", ["", "   ", EOFError(), KeyboardInterrupt()])
def test_each_line_is_a_question_until_the_session_ends(end: str | BaseException) -> None:
    console = _console(["  And the noise?  ", "What about [bold]costs[/bold]?", end, "never"])
    asked = list(follow_ups.questions(console, "t1"))
    assert asked == ["And the noise?", "What about [bold]costs[/bold]?"]
    screen = console.file.getvalue()  # type: ignore[attr-defined]
    assert screen.count(follow_ups.PROMPT) == 3
    assert screen.count('later: deep-research --follow-up t1 "…"') == 3


def test_the_session_asks_at_most_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow_ups, "MAX_FOLLOW_UPS", 2)
    console = _console(["one", "two", "three"])
    assert list(follow_ups.questions(console, "t1")) == ["one", "two"]
    assert "ask more with --follow-up" in console.file.getvalue()  # type: ignore[attr-defined]


def test_a_line_that_is_not_utf8_is_readable() -> None:
    console = _console(["caf\udce9?", ""])
    assert list(follow_ups.questions(console, "t1")) == ["caf\ufffd?"]
