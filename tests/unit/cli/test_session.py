"""`cli.session`: how an interrupt is answered and logged, what cannot resume.

Whole runs through `run_research` (new, resumed, stopped) are tested through the CLI in
tests/e2e/test_cli*.py; these call its parts directly.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from deep_research.cli import session
from deep_research.cli.clarify import NO_ANSWER
from deep_research.cli.runs import Home
from deep_research.cli.session import ResumeError
from deep_research.cli.traffic import TrafficLog
from deep_research.config.settings import Context


def answered(
    tmp_path: Path, request: dict[str, Any], interactive: bool, *typed: str
) -> tuple[Any, str, list[str]]:
    out = io.StringIO()
    console = Console(file=out, width=200)
    answers = iter(typed)
    console.input = lambda prompt="": next(answers)  # type: ignore[method-assign,assignment]
    log = TrafficLog(tmp_path / "t.jsonl")
    try:
        command = session.asyncio.run(session._answer(console, request, interactive, log))
    finally:
        log.close()
    kinds = [json.loads(line)["kind"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    return command.resume, out.getvalue(), kinds


def test_questions_are_numbered_and_the_typed_answer_resumes(tmp_path: Path) -> None:
    request = {"round": 2, "questions": ["Which country?", "Which year?"], "error": "too short"}
    value, screen, kinds = answered(tmp_path, request, True, "  France, 2026 ")
    assert value == "France, 2026" and kinds == ["interrupt", "answer"]
    assert screen.index("too short") < screen.index("(round 2)") < screen.index("1. Which")
    assert "  2. Which year?" in screen


def test_no_answer_lets_the_agent_decide(tmp_path: Path) -> None:
    request: dict[str, Any] = {"questions": ["Which?"]}
    assert answered(tmp_path, request, True, "")[0] == NO_ANSWER
    value, screen, _ = answered(tmp_path, request, False)
    assert value == NO_ANSWER and "stdin is not a terminal" in screen


def test_a_plan_review_is_answered_by_the_plan_prompt(tmp_path: Path) -> None:
    value, screen, kinds = answered(tmp_path, {"plan": [{"content": "a"}]}, False)
    assert value == "ok" and "research plan" in screen and kinds == ["interrupt", "answer"]


async def test_a_thread_never_started_cannot_be_resumed_and_the_log_says_so(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path / ".deep_research")
    with pytest.raises(ResumeError, match="'abc12345' has no checkpoint"):
        await session.run_research(
            home,
            tmp_path / "reports",
            Console(file=io.StringIO()),
            Context(),
            thread_id="abc12345",
            question="why?",
            settings={},
            resume=True,
            interactive=False,
        )
    lines = home.log_path("abc12345").read_text().splitlines()
    start, end = (json.loads(line) for line in lines)
    assert (start["action"], end["action"], end["status"]) == ("resume", "end", "failed")
    assert end["error"].startswith("ResumeError: ") and not (tmp_path / "reports").exists()
