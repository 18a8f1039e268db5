"""What plan an orchestrator reply holds for review, and the tasks it sends, called directly."""

from __future__ import annotations

from langgraph.types import Send

from deep_research.nodes import churn
from deep_research.nodes.dispatch import dispatch_reply, plan_of, scholarly
from tests.unit.nodes.test_plan_review import call, reply, state, todos


def test_the_plan_is_the_research_topics_when_the_reply_researches() -> None:
    paused = reply(
        call("write_todos", "t", todos=todos("ignored")),
        call("research", "r", topic="Heat pump costs"),
    )
    plan = plan_of(state(paused), paused)
    assert plan == [{"content": "Heat pump costs", "status": "pending"}]


def test_else_the_last_valid_todo_call_that_was_not_refused() -> None:
    paused = reply(
        call("write_todos", "a", todos=todos("first")),
        call("write_todos", "b", todos=todos("second")),
        call("write_todos", "c", todos="not a list"),
        call("write_todos", "d", todos=todos("refused")),
    )
    guard = {**churn.fresh(), "refused": {"d": "locked"}}
    assert [t["content"] for t in plan_of(state(paused, churn=guard), paused)] == ["second"]


def test_a_reply_with_no_plan_has_an_empty_one() -> None:
    paused = reply(call("write_todos", "a", todos="bad"), call("unknown", "b"))
    assert plan_of(state(paused), paused) == []


def test_an_item_written_twice_is_shown_once() -> None:
    researching = reply(
        call("research", "r1", topic="Heat pump costs"),
        call("research", "r2", topic="heat pump  COSTS"),
    )
    assert [t["content"] for t in plan_of(state(researching), researching)] == ["Heat pump costs"]
    planning = reply(call("write_todos", "t", todos=todos("Noise", "Grants", " noise")))
    assert [t["content"] for t in plan_of(state(planning), planning)] == ["Noise", "Grants"]


def test_a_topic_is_scholarly_only_when_its_call_says_true() -> None:
    """Read leniently: what a small model writes for true counts; nothing else does, and
    no value makes the call invalid (its topic is researched all the same)."""
    for yes in (True, "true", " True "):
        assert scholarly({"topic": "t", "scholarly": yes}), yes
    for no in (False, None, 1, "yes", "x" * 100_000, ["true"], {"true": True}):
        assert not scholarly({"topic": "t", "scholarly": no}), no
    assert not scholarly({"topic": "t"}) and not scholarly("not a dict")


def test_each_research_task_carries_whether_its_topic_is_scholarly() -> None:
    paused = reply(
        call("research", "a", topic="Attention-based heat pump control", scholarly=True),
        call("research", "b", topic="Heat pump prices", scholarly="no"),
        call("research", "c", topic="Heat pump noise"),
    )
    sent = dispatch_reply(state(paused))
    assert [(s.arg["topic"], s.arg["scholarly"]) for s in sent if isinstance(s, Send)] == [
        ("Attention-based heat pump control", True),
        ("Heat pump prices", False),
        ("Heat pump noise", False),
    ]
