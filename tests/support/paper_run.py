"""A whole research run on one question with the scripted model, for the end-to-end tests of
what a researcher reads (PDFs, papers, articles): a brain whose report cites what a test
says, the run's state, and what the researchers saw."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.brain import ResearchBrain, _texts, role_of
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer


@dataclass
class ReportingBrain(ResearchBrain):
    """Researches as `ResearchBrain` does; its final report is `body` under a title."""

    body: str = ""

    def _orchestrate(self, request: dict[str, Any]) -> Reply:
        reply = super()._orchestrate(request)
        if reply.tool_calls or not _texts(request, "tool"):
            return reply
        return Reply(content=f"# Heat pumps in the cold\n\n{self.body}\n")


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
