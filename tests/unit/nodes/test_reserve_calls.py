"""The reserve steps before the top-level model steps: what each counts, and from what."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from deep_research.config.settings import Context
from deep_research.llm import models, reservations
from deep_research.nodes import planning, report_writer
from deep_research.nodes.clarify import clarifier_messages
from deep_research.nodes.orchestrator import TOOLS
from deep_research.nodes.reserve_calls import reserve_clarify, reserve_orchestrate
from tests.support.scripted_model import ScriptedChatModel

PRICED = {f"{r}_model": "openai:gpt-4o-mini" for r in ("clarifier", "orchestrator", "researcher")}


@pytest.fixture(autouse=True)
def scripted(use_script: Callable[..., ScriptedChatModel], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")
    use_script(lambda messages, tools: AIMessage("unused"))


def state(**values: Any) -> Any:
    return {"messages": [HumanMessage("How do heat pumps work?")], **values}


def runtime(**settings: Any) -> Runtime[Context]:
    return Runtime(context=Context(**{**PRICED, **settings}))


def test_without_a_budget_nothing_is_reserved() -> None:
    for reserve in (reserve_clarify, reserve_orchestrate):
        assert reserve(state(), runtime()) == {"call_reservation": None, "cost_counted": 0}


def test_the_clarifier_reserves_its_worst_case_or_nothing_when_it_asks_no_model() -> None:
    context = Context(**PRICED, max_cost_usd=1.0)
    update = reserve_clarify(state(), Runtime(context=context))
    model = models.role_model(context, "clarifier")
    worst = reservations.worst_case(model, clarifier_messages(state()))
    assert update["cost_counted"] == update["call_reservation"]["micros"] == worst > 0
    off = reserve_clarify(state(), runtime(max_cost_usd=1.0, allow_clarification=False))
    assert off["cost_counted"] == 0 and off["call_reservation"]["micros"] == 0
    assert reservations.usable(off["call_reservation"]), "the clarify step may still run"


def test_a_planning_turn_never_reserves_what_the_report_needs() -> None:
    context = Context(**PRICED, max_cost_usd=1.0)
    model = models.role_model(context, "orchestrator")
    kept = report_writer.report_reserve(model)
    planning_worst = reservations.worst_case(
        model, planning.planning_messages(state(), context), TOOLS
    )
    assert reserve_orchestrate(state(), Runtime(context=context))["cost_counted"] == planning_worst
    # Only a little more than the report's reserve is left: planning gets just that part.
    counted = 1_000_000 - kept - 100
    tight = reserve_orchestrate(state(cost_counted=counted), Runtime(context=context))
    assert tight["cost_counted"] == 100
    spent = reserve_orchestrate(state(cost_counted=1_000_000 - kept), Runtime(context=context))
    assert spent["cost_counted"] == 0


@pytest.mark.parametrize(
    "values", [{"orchestrator_turns": 11}, {"budget_note": "The run stopped at its budget."}]
)
def test_the_report_turn_may_reserve_everything_that_is_left(values: dict[str, Any]) -> None:
    context = Context(**PRICED, max_cost_usd=1.0, max_orchestrator_turns=12)
    worst = report_writer.report_worst(models.role_model(context, "orchestrator"))
    assert reserve_orchestrate(state(**values), Runtime(context=context))["cost_counted"] == worst
    almost = state(**values, cost_counted=1_000_000 - 50)
    assert reserve_orchestrate(almost, Runtime(context=context))["cost_counted"] == 50
