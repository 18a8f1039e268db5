"""The plan's todo list, ticked off as research comes back.

Research tasks run in parallel and none may write the list (one writer per step), so the
turn after them, `orchestrate`, marks each item whose research came back with findings as
completed, in state (Studio and the SDK see it) and in a `todos` event (the live view).
An item matches the topic researched for it case and spacing aside (`topics.topic_key`),
which is also how the floor and an edited plan make topics of items. Research that failed
leaves its item as it was: nothing was found for it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from deep_research.nodes import dispatch
from deep_research.runtime import progress
from deep_research.state import RESEARCH, ResearchState, Todo
from deep_research.text.topics import topic_key


def ticked(state: ResearchState) -> dict[str, Any]:
    """`{"todos": [...]}` with every item researched by the last reply marked completed, its
    `todos` event sent; {} when no item changes."""
    done = {topic_key(topic) for topic in researched_topics(state)}
    todos = state.get("todos") or []
    if not any(t["status"] != "completed" and topic_key(t["content"]) in done for t in todos):
        return {}
    marked = [
        Todo(content=t["content"], status="completed") if topic_key(t["content"]) in done else t
        for t in todos
    ]
    progress.emit("todos", todos=marked)
    return {"todos": marked}


def researched_topics(state: ResearchState) -> list[str]:
    """The topics of the last reply's research calls that came back with findings."""
    messages = state.get("messages") or []
    replies = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    if not replies:
        return []
    reply = messages[replies[-1]]
    assert isinstance(reply, AIMessage)
    topics = dispatch.valid_research(reply, {})
    return [
        topics[m.tool_call_id]
        for m in messages[replies[-1] + 1 :]
        if isinstance(m, ToolMessage)
        and m.name == RESEARCH
        and m.status != "error"
        and m.tool_call_id in topics
    ]
