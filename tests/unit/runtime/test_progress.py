"""Progress events from inside a node: sent on the custom stream, scrubbed, or not at all."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from deep_research.runtime.progress import emit


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
