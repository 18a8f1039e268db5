"""When the report is written as sections (`report_in_sections`) and from which parts: the
setting, a plan all researched or the turn cap, two topics or more, no budget, and under
`auto` no request for a table or a comparison."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deep_research.config.names import ConfigError
from deep_research.config.settings import Context
from deep_research.llm import models, slots
from deep_research.nodes import report_sections
from deep_research.state import RESEARCH

TOPICS = ("heat pump costs", "heat pump noise")


def researched(
    question: str = "Are heat pumps worth it?", *, failed: str = "", follow_up: bool = False
) -> Any:
    calls = [{"name": RESEARCH, "args": {"topic": t}, "id": t, "type": "tool_call"} for t in TOPICS]
    results = [
        ToolMessage(
            f"Findings on {t}.",
            tool_call_id=t,
            name=RESEARCH,
            status="error" if t == failed else "success",
        )
        for t in TOPICS
    ]
    earlier = [
        HumanMessage("An earlier question"),
        AIMessage("", tool_calls=[{**calls[0], "id": "old"}]),
        ToolMessage("Old findings.", tool_call_id="old", name=RESEARCH),
        AIMessage("# The earlier report"),
    ]
    if not follow_up:  # a first question: the thread has no earlier research
        earlier = earlier[:1]
    return {
        "question": question,
        "messages": [*earlier, HumanMessage(question), AIMessage("", tool_calls=calls), *results],
        "todos": [{"content": t, "status": "completed"} for t in TOPICS],
    }


def test_a_plan_all_researched_is_split_into_this_question_s_parts_in_order() -> None:
    found = report_sections.due(researched(), Context(report_in_sections="on"), False)
    assert [part.topic for part in found] == list(TOPICS)
    assert [part.findings for part in found] == [f"Findings on {t}." for t in TOPICS]


def test_a_follow_up_keeps_the_single_call_which_reads_the_earlier_findings_too() -> None:
    """A follow-up's report builds on what the thread read before; sections read only
    this question's findings, so the single call writes it."""
    state = researched(follow_up=True)
    assert [part.topic for part in report_sections.parts(state)] == list(TOPICS)
    assert report_sections.due(state, Context(report_in_sections="on"), True) == []


def test_auto_is_the_default_and_off_splits_nothing() -> None:
    assert Context().report_in_sections == "auto"
    due = report_sections.due(researched(), Context(), True)
    assert [part.topic for part in due] == list(TOPICS)
    assert report_sections.due(researched(), Context(report_in_sections="off"), True) == []


def test_a_plan_with_items_left_waits_for_the_orchestrator_unless_it_is_the_turn_cap() -> None:
    state = researched()
    state["todos"][1]["status"] = "pending"
    on = Context(report_in_sections="on")
    assert report_sections.due(state, on, False) == []
    assert len(report_sections.due(state, on, True)) == 2


def test_one_topic_a_budget_or_a_budget_stop_keep_the_single_call() -> None:
    on = Context(report_in_sections="on")
    assert report_sections.due(researched(failed=TOPICS[1]), on, True) == []
    assert (
        report_sections.due(researched(), on.model_copy(update={"max_cost_usd": 1.0}), True) == []
    )
    assert report_sections.due({**researched(), "budget_note": "stopped"}, on, True) == []


def test_auto_keeps_a_table_or_comparison_whole_and_on_splits_it() -> None:
    auto, on = Context(report_in_sections="auto"), Context(report_in_sections="on")
    assert len(report_sections.due(researched(), auto, True)) == 2
    for question in ("Compare costs and noise", "As a table please", "Kosten im Vergleich", "比较"):
        assert report_sections.due(researched(question), auto, True) == [], question
        assert len(report_sections.due(researched(question), on, True)) == 2


def test_auto_keeps_one_call_when_researchers_run_one_at_a_time_and_on_splits_anyway() -> None:
    """One researcher at a time is a one-slot server: the parts would queue there, so the
    split would only add the frame's call."""
    one_slot = {"max_researchers_per_turn": 1}
    assert report_sections.due(researched(), Context(**one_slot), True) == []
    on = Context(report_in_sections="on", **one_slot)
    assert len(report_sections.due(researched(), on, True)) == 2
    assert len(report_sections.due(researched(), Context(max_researchers_per_turn=2), True)) == 2


async def test_auto_keeps_one_call_on_a_server_found_to_answer_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found out by the run's calls (llm/slots.py), or said by `one_slot_server`; `off`
    splits even where an earlier run in this process found one slot."""
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    endpoint = models.role_model(Context(), "orchestrator").endpoint
    assert len(report_sections.due(researched(), Context(), True)) == 2
    assert report_sections.due(researched(), Context(one_slot_server="on"), True) == []
    slots.gate(endpoint, "local:x").one_slot = True  # what an earlier run found out
    assert report_sections.due(researched(), Context(), True) == []
    assert len(report_sections.due(researched(), Context(one_slot_server="off"), True)) == 2


def test_an_unknown_value_is_refused_with_the_values_named() -> None:
    with pytest.raises(ConfigError, match="'off', 'auto' or 'on'"):
        Context(report_in_sections="sometimes")  # type: ignore[arg-type]


def test_the_request_is_the_question_and_the_clarifiers_answers_not_plan_review_notes() -> None:
    state = researched()
    question = state["messages"][1]
    review = HumanMessage("The user reviewed your plan and asks for these changes: drop noise.")
    state["messages"][1:2] = [
        question,
        AIMessage("Before I start, a few questions:\n1. Where?", name="clarifier"),
        HumanMessage("EU only, and put it in a table"),
        review,
    ]
    asked = report_sections.request(state)
    assert asked == "Are heat pumps worth it?\n\nEU only, and put it in a table"
    # The answer asks for a table: `auto` keeps the report whole, as before the review.
    assert report_sections.due(state, Context(report_in_sections="auto"), True) == []
