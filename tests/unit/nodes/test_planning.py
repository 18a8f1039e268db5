"""What a planning call sends: the report's rules only once research came back."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

from deep_research.config.settings import Context
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
