"""Whole runs with the real ChatOpenAI against the scripted OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.brain import LINK, ResearchBrain
from tests.support.fakes.openai_server import ScriptedOpenAIServer

QUESTION = {"messages": [{"role": "user", "content": "How well do heat pumps work in the cold?"}]}


@contextmanager
def serve(brain: ResearchBrain, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(brain) as server:
        monkeypatch.setenv("LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("LLM_MODEL", "test-model")
        yield server


async def research_run(context: dict[str, Any], thread: str = "t") -> dict[str, Any]:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    return await graph.ainvoke(QUESTION, config, context={"allow_clarification": False, **context})


def cited(report: str) -> set[str]:
    return set(LINK.findall(report))
