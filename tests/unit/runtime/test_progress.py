"""Progress events from inside a node: sent on the custom stream, scrubbed, or not at all."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

import deep_research
from deep_research.mcp.progress import SHOWN_EVENTS
from deep_research.runtime import progress
from deep_research.runtime.progress import ProgressEvent, emit

EVENTS = get_args(ProgressEvent)


class State(TypedDict):
    n: int


def events_of(**fields: Any) -> list[Any]:
    def node(state: State) -> State:
        emit("search", **fields)
        return state

    builder = StateGraph(State)
    builder.add_node(node)
    builder.add_edge(START, "node")
    return list(builder.compile().stream({"n": 0}, stream_mode="custom"))


def test_an_event_reaches_the_custom_stream_with_its_name_and_fields() -> None:
    assert events_of(id="r1", query="heat pumps") == [
        {"event": "search", "id": "r1", "query": "heat pumps"}
    ]


def test_a_secret_never_leaves_in_an_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-secret-value-1234567890")
    [event] = events_of(error="401 for key tvly-secret-value-1234567890")
    assert "secret-value" not in str(event) and event["error"].startswith("401 for key ")


def test_outside_a_run_an_event_is_a_no_op() -> None:
    emit("search", query="q")  # a plain call, no graph run: it neither raises nor sends


PACKAGE = Path(deep_research.__file__).parent
# The modules that match on an event's name, each as `name == "..."`.
CONSUMERS = ("runtime/progress_lines.py", "cli/view.py", "cli/counts.py")


def matched_names(source: str) -> set[str]:
    """The names `source` compares its `name` with."""
    return {
        right.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Name)
        and node.left.id == "name"
        for right in node.comparators
        if isinstance(right, ast.Constant) and isinstance(right.value, str)
    }


def test_every_event_is_sent_somewhere_and_every_name_sent_is_an_event() -> None:
    sources = "\n".join(path.read_text() for path in PACKAGE.rglob("*.py"))
    assert set(re.findall(r'progress\.emit\(\s*"(\w+)"', sources)) == set(EVENTS)


def test_every_name_a_consumer_matches_is_an_event() -> None:
    for module in CONSUMERS:
        matched = matched_names((PACKAGE / module).read_text())
        assert matched and matched <= set(EVENTS), module
    assert SHOWN_EVENTS <= set(EVENTS)


def test_the_event_table_names_exactly_the_events() -> None:
    assert progress.__doc__ is not None
    rows = re.findall(r"^\| `(\w+)` \|", progress.__doc__, flags=re.MULTILINE)
    assert rows == list(EVENTS)
