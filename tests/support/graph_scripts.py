"""Scripted replies for whole-graph tests: an orchestrator that fans out, a researcher that
searches once then reports, and a run with an in-memory checkpointer."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder

NO_CLARIFY = {"allow_clarification": False}
LINK = re.compile(r"\]\((https?://[^)\s]+)\)")


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def tool_results(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def researcher(messages: list[BaseMessage], queries: int = 1) -> AIMessage:
    """Search once with `queries` queries, then report every link it was given."""
    results = tool_results(messages)
    if not results:
        topic = str(messages[1].content)
        qs = [f"{topic} q{i}" for i in range(queries)]
        return AIMessage("", tool_calls=[call("web_search", {"queries": qs}, "s1")])
    links = LINK.findall(str(results[-1].content))
    return AIMessage("Findings: " + " ".join(f"[claim]({u})" for u in links))


def orchestrator_fanning_out(*topics: str) -> Callable[[list[BaseMessage]], AIMessage]:
    def reply(messages: list[BaseMessage]) -> AIMessage:
        results = tool_results(messages)
        if not results:
            calls = [call("research", {"topic": t}, f"r{i}") for i, t in enumerate(topics)]
            return AIMessage("", tool_calls=calls)
        links = LINK.findall("\n".join(str(m.content) for m in results))
        return AIMessage("# Report\n\n" + " ".join(f"[c]({u})" for u in links))

    return reply


def report_part(body: str) -> AIMessage:
    """A section (every link its findings hold) or the frame (title, opening, conclusion)."""
    if "Write the frame around the sections" in body:
        return AIMessage("# Report\n\nIn brief, the sections below.\n\n## Conclusion\n\nDone.")
    return AIMessage("A section: " + " ".join(f"[c]({u})" for u in LINK.findall(body)))


def script_for(
    orchestrator: Callable[[list[BaseMessage]], AIMessage],
    research: Callable[[list[BaseMessage]], AIMessage] = researcher,
) -> Callable[[list[BaseMessage], set[str]], AIMessage]:
    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        if "web_search" in tools:
            return research(messages)
        if "research" in tools:
            return orchestrator(messages)
        system = str(messages[0].content) if isinstance(messages[0], SystemMessage) else ""
        if "one part of a research report" in system:  # the report in sections
            return report_part(str(messages[-1].content))
        if "research phase is over" in system:
            return AIMessage("# Forced report\n\nWritten without tools.")
        if "Research the ONE topic" in system:  # the researcher, web or library
            return AIMessage("Wrap-up report without tools.")
        return AIMessage('{"need_clarification": false, "questions": [], "verification": "ok"}')

    return script


async def run(context: dict[str, Any], thread: str = "t") -> dict[str, Any]:
    graph = builder.compile(checkpointer=InMemorySaver())
    question = {
        "messages": [{"role": "user", "content": "How do heat pumps perform in cold climates?"}]
    }
    return await graph.ainvoke(question, {"configurable": {"thread_id": thread}}, context=context)
