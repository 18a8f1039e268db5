"""Plan review's routes, called directly: into the review and out of it."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolCall
from langgraph.runtime import Runtime
from langgraph.types import Send

from deep_research.config.settings import Context
from deep_research.nodes import churn
from deep_research.nodes.orchestrator import route_orchestrate
from deep_research.nodes.plan_review import read_review, route_review

REVIEWING = Runtime(context=Context(review_plan=True))


def call(name: str, call_id: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, id=call_id)


def todos(*items: str) -> list[dict[str, str]]:
    return [{"content": item, "status": "pending"} for item in items]


def reply(*calls: ToolCall) -> AIMessage:
    return AIMessage("", tool_calls=list(calls))


def state(last: Any, **fields: Any) -> Any:
    return {"messages": [HumanMessage("Q?"), last], "churn": churn.fresh(), **fields}


def test_a_plan_goes_to_review_only_when_on_and_not_yet_reviewed() -> None:
    paused = reply(call("research", "r", topic="Heat pump costs"))
    assert route_orchestrate(state(paused), REVIEWING) == "review_plan"
    reviewed = route_orchestrate(state(paused, plan_reviewed=True), REVIEWING)
    off = route_orchestrate(state(paused), Runtime(context=Context()))
    for routed in (reviewed, off):
        assert isinstance(routed, list) and [type(s) for s in routed] == [Send]


def test_a_reply_without_a_plan_is_dispatched_unreviewed() -> None:
    assert route_orchestrate(state(AIMessage("The report.")), REVIEWING) == "finalize"
    no_plan = reply(call("write_todos", "a", todos="bad"))
    assert route_orchestrate(state(no_plan), REVIEWING) == ["answer_tools"]


def test_after_review_an_approved_reply_runs_and_a_changed_plan_replans() -> None:
    paused = reply(call("research", "r", topic="Heat pump costs"))
    routed = route_review(state(paused, shares={"r": {"searches": 4}}))
    assert isinstance(routed, list)
    [sent] = routed
    assert isinstance(sent, Send) and sent.arg["share"] == {"searches": 4}
    assert route_review(state(HumanMessage("Change the plan."))) == "orchestrate"


def test_a_plan_the_user_wrote_holds_each_item_once() -> None:
    review = read_review(["Heat pump costs", "Noise", "heat pump  costs ", "NOISE"])
    assert review.items == ("Heat pump costs", "Noise")
