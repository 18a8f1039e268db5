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


def merge_sources(current: list[Source], new: list[Source]) -> list[Source]:
    """One record per URL, in order of first retrieval; text retrieved later is added to it.

    A page seen as a snippet by one researcher may be read in full by another: its record
    must hold everything retrieved, since citations are checked against it.
    """
    merged = list(current)
    position = {source["url"]: i for i, source in enumerate(merged)}
    for source in new:
        i = position.get(source["url"])
        if i is None:
            position[source["url"]] = len(merged)
            merged.append(source)
        elif source["content"] and source["content"] not in merged[i]["content"]:
            kept = merged[i]
            merged[i] = {**kept, "content": f"{kept['content']}\n\n{source['content']}".strip()}
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
