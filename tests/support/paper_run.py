"""A whole research run on one question with the scripted model, for the end-to-end tests of
what a researcher reads (PDFs, papers, articles): its state, and what the researchers saw."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.brain import role_of
from tests.support.fakes.openai_server import ScriptedOpenAIServer


async def researched(
    monkeypatch: pytest.MonkeyPatch,
    llm: ScriptedOpenAIServer,
    provider: str,
    question: str = "Heat pumps in the cold?",
) -> tuple[dict[str, Any], str]:
    """The run's final state, and every message the researchers were sent, as one text.
    One researcher reads one page a query, unfiltered, and no one is asked to clarify."""
    monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("LLM_MODEL", "test-model")
    graph = builder.compile(checkpointer=InMemorySaver())
    context = {
        "allow_clarification": False,
        "search_provider": provider,
        "relevance_filter": False,
        "fetch_top_n": 1,
    }
    asked = {"messages": [{"role": "user", "content": question}]}
    out = await graph.ainvoke(asked, {"configurable": {"thread_id": provider}}, context=context)
    seen = "\n".join(
        str(m.get("content"))
        for body in llm.requests
        if role_of(body) == "researcher"
        for m in body["messages"]
    )
    return out, seen
