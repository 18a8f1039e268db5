"""The MCP tool's progress messages: only the events a waiting caller needs, capitalised,
and nothing for an event of the wrong shape. (Cutting and control codes: test_tool.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from deep_research.mcp import run
from deep_research.mcp.progress import SHOWN_CHARS, SHOWN_EVENTS, progress_message, short
from deep_research.runtime.progress_lines import progress_line

SHOWN: list[dict[str, Any]] = [
    {"event": "orchestrator_turn", "turn": 1, "cap": 6},
    {"event": "research_started", "id": "r", "topic": "heat pumps"},
    {"event": "search", "id": "r", "query": "cop", "sent": 1, "share": 3, "cap": 9},
    {"event": "research_done", "id": "r", "topic": "heat pumps", "sources": 2},
    {"event": "research_failed", "id": "r", "topic": "heat pumps", "error": "boom"},
    {"event": "report_written", "chars": 1200, "failures": 0},
    {"event": "model_retry", "role": "researcher", "reason": "timeout", "attempt": 2},
    {"event": "reply_cut", "role": "orchestrator", "tokens_out": 4096, "outcome": "kept"},
    {"event": "floor", "id": "", "acted": "dispatched", "detail": "2 topics"},
    {"event": "clarifier_gave_up", "reason": "an unreadable reply"},
    {"event": "relevance_off", "id": "r", "reason": "onnxruntime could not be imported"},
]


def test_every_shown_event_has_a_line_the_progress_wording_capitalised() -> None:
    assert {event["event"] for event in SHOWN} == SHOWN_EVENTS
    for event in SHOWN:
        line = progress_line(event, words=short)
        assert line is not None
        assert progress_message(event) == line[0].upper() + line[1:]


@pytest.mark.parametrize(
    "event",
    [
        {"event": "todos", "todos": [{"content": "a", "status": "pending"}]},
        {"event": "model_repaired", "role": "researcher", "repair": "JSON repaired"},
        {"event": "memory", "status": "unavailable", "reason": "locked"},
        {"event": "search_refused", "id": "r", "query": "q", "cap": 3},
        {"event": "fetch", "id": "r", "url": "https://a.example/", "chars": 10, "skipped": ""},
        {"no": "event"},
    ],
)
def test_other_events_are_not_shown(event: dict[str, Any]) -> None:
    # The CLI words some of these (a plan, memory, a refused search); a progress bar does not.
    assert progress_message(event) is None


@pytest.mark.parametrize(
    "event",
    [
        {"event": "orchestrator_turn", "turn": 1},  # no cap
        {"event": "research_started"},
        {"event": "report_written", "chars": "many"},
        {"event": "research_done", "topic": "t", "sources": "two"},
    ],
)
def test_an_event_of_the_wrong_shape_gets_no_message(event: dict[str, Any]) -> None:
    assert progress_message(event) is None


def test_short_puts_any_value_on_one_cut_line() -> None:
    assert short(["a\nb", 3]) == "['a\\nb', 3]"
    assert len(short("word " * 100)) <= SHOWN_CHARS


async def test_a_run_says_unscored_results_once_and_every_search() -> None:
    """`relevance_off` comes with each scored search; the waiting caller hears it once."""
    off = {"event": "relevance_off", "id": "r", "reason": "no onnxruntime"}
    search = {"event": "search", "id": "r", "query": "cop", "sent": 1, "share": 3, "cap": 9}
    parts = [off, search, {**off, "id": "s"}, search, off]

    class Runs:
        async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            for data in parts:
                yield SimpleNamespace(event="custom|research:1", data=data)

    heard: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(str(message))

    client: Any = SimpleNamespace(runs=Runs())
    await run._stream(client, "t", {}, {}, None, progress)
    assert heard == [
        "Relevance not scored, results kept in the search's order: no onnxruntime",
        "Searching: cop (search 1 of 3)",
        "Searching: cop (search 1 of 3)",
    ]
