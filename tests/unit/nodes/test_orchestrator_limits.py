"""The orchestrator's calls: the report's is sized to `report_length`, planning's is not."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from deep_research.config.settings import Context
from deep_research.llm import models
from deep_research.nodes import orchestrator, report_writer


def test_only_the_report_call_is_sized_to_a_brief_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_MAX_TOKENS", raising=False)
    sent: dict[str, int | None] = {}

    async def plan(state: Any, context: Any, model: models.RoleModel, *_: Any) -> dict[str, Any]:
        sent["plan"] = model.max_tokens
        return {}

    async def write(model: models.RoleModel, *_: Any) -> AIMessage:
        sent["report"] = model.max_tokens
        return AIMessage("The report.")

    monkeypatch.setattr(orchestrator, "_ask", plan)
    monkeypatch.setattr(report_writer, "write_report", write)
    state: Any = {"messages": [HumanMessage("Heat pumps?")], "question": "Heat pumps?"}
    for turns in (5, 1):  # a planning turn, then a turn at the cap, which writes the report
        context = Context(report_length="brief", max_orchestrator_turns=turns)
        asyncio.run(orchestrator.orchestrate(state, Runtime(context=context)))
    assert sent == {"plan": 4096, "report": 2048}, "a thinking model's plan is not cut at 2,048"
