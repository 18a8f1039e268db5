"""Typed graph states, their reducers, and the records that flow between nodes."""

from __future__ import annotations

import operator
from typing import Annotated, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class Source(TypedDict):
    """A page a researcher actually retrieved in this run."""

    url: str
    title: str
    content: str
    found_by: str


class Todo(TypedDict):
    content: str
    status: Literal["pending", "in_progress", "completed"]


class ResearchFailure(TypedDict):
    topic: str
    error: str


class ChurnGuard(TypedDict):
    """The orchestrator's loop counters (see `deep_research/churn.py`)."""

    todo_calls: int
    todo_only_turns: int
    todos_locked: bool
    streaks: dict[str, int]  # call signature -> consecutive replies that made that call
    refused: dict[str, str]  # call id in the latest reply -> "locked" or "repeated"


def merge_sources(current: list[Source], new: list[Source]) -> list[Source]:
    """Keep the first record of each URL, in order of first retrieval."""
    seen = {source["url"] for source in current}
    merged = list(current)
    for source in new:
        if source["url"] not in seen:
            seen.add(source["url"])
            merged.append(source)
    return merged


class InputState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class ResearchState(InputState):
    """The top-level graph's state."""

    todos: list[Todo]
    sources: Annotated[list[Source], merge_sources]
    failures: Annotated[list[ResearchFailure], operator.add]
    searches_used: Annotated[int, operator.add]
    pending_questions: list[str]
    clarification_rounds: int
    orchestrator_turns: int
    churn: ChurnGuard
    final_report: str


class OutputState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    final_report: str
    sources: list[Source]
    failures: list[ResearchFailure]


class ResearchTask(TypedDict):
    """What the orchestrator's `research` call hands to one research task (via `Send`)."""

    topic: str
    tool_call_id: str
    dispatch_id: str
    searches_before: int


class ResearcherState(TypedDict):
    """The research subgraph's state."""

    messages: Annotated[list[AnyMessage], add_messages]
    topic: str
    tool_call_id: str
    dispatch_id: str
    searches_before: int
    sources: Annotated[list[Source], merge_sources]
    turns: int
