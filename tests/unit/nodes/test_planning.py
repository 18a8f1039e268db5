"""What a planning call sends: the report's rules only once research came back; its tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from deep_research.config.settings import Context, load_context
from deep_research.nodes import planning
from deep_research.runtime import prompts


def test_the_report_rules_join_the_prompt_once_research_came_back() -> None:
    question = HumanMessage("How do heat pumps work?")
    before = planning.planning_messages({"messages": [question]}, Context())  # type: ignore[typeddict-item]
    assert isinstance(before[0], SystemMessage) and before[1:] == [question]
    rules = prompts.render("orchestrator_report")
    assert rules not in before[0].text
    result = ToolMessage("findings", tool_call_id="r1", name="research")
    after = planning.planning_messages({"messages": [question, result]}, Context())  # type: ignore[typeddict-item]
    assert rules in after[0].text and after[1:] == [question, result]


def test_research_asks_whether_a_topic_is_scholarly_only_where_the_run_offers_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Asked once for a topic, in the orchestrator's few calls, rather than described in
    every researcher call; no default shown (leaving it out is false)."""
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)

    def research(settings: dict[str, Any]) -> dict[str, Any]:
        tools = map(convert_to_openai_tool, planning.tools(load_context(settings)))
        (sent,) = [t["function"] for t in tools if t["function"]["name"] == "research"]
        return dict(sent)

    asked = research({})["parameters"]["properties"]["scholarly"]
    assert asked == {"description": planning.SCHOLARLY, "type": "boolean"}
    assert len(planning.SCHOLARLY) <= 50, "it goes with every orchestrator call"
    assert "papers" in planning.SCHOLARLY and "drugs" in planning.SCHOLARLY
    assert research({})["description"] == "One focused topic for a researcher."
    for plain in ({"scholarly_sources": False}, {"search_provider": "ddgs"}):
        assert "scholarly" not in json.dumps(research(plain)), plain
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:8888")  # `auto` keeps queries there
    assert "scholarly" not in json.dumps(research({}))
