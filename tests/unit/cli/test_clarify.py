"""`cli.clarify`: the clarifying questions shown in a terminal, and the answer read."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from deep_research.cli import clarify
from deep_research.cli.clarify import NO_ANSWER


async def asked(request: dict[str, Any], interactive: bool, *typed: str) -> tuple[str, str]:
    out = io.StringIO()
    console = Console(file=out, width=200)
    answers = iter(typed)

    def read(prompt: str = "") -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    console.input = read  # type: ignore[method-assign]
    return await clarify.ask(console, request, interactive), out.getvalue()


async def test_the_error_then_the_numbered_questions_then_the_typed_line() -> None:
    request = {"round": 2, "questions": ["Which country?", "Which year?"], "error": "too short"}
    value, screen = await asked(request, True, "  France, 2026 ")
    assert value == "France, 2026"
    assert screen.index("too short") < screen.index("(round 2)") < screen.index("1. Which")
    assert "  2. Which year?" in screen and "Answer in one line" in screen


async def test_enter_or_end_of_input_lets_the_agent_decide() -> None:
    assert (await asked({"questions": ["Which?"]}, True, ""))[0] == NO_ANSWER
    assert (await asked({"questions": ["Which?"]}, True))[0] == NO_ANSWER


async def test_without_a_terminal_nothing_is_read_and_the_screen_says_why() -> None:
    value, screen = await asked({"questions": ["Which?"]}, False, "never read")
    assert value == NO_ANSWER and "stdin is not a terminal" in screen
    assert "(round 1)" in screen
