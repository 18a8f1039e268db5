"""The orchestrator's floor: when it acts, and what it researches."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deep_research.config.settings import Context
from deep_research.nodes import floor
from deep_research.state import RESEARCH, ResearchState, Todo
from deep_research.text.topics import TOPIC_CHARS
from tests.support.graph_scripts import call


def state(**fields: Any) -> ResearchState:
    base: dict[str, Any] = {"messages": [HumanMessage("Is it worth it?")], "question": ""}
    return ResearchState(**{**base, **fields})  # type: ignore[typeddict-item]


TALK = AIMessage("Sure, it is worth it.")
PLAN = AIMessage(
    "",
    tool_calls=[
        call("write_todos", {"todos": [{"content": "Costs", "status": "pending"}]}, "t"),
    ],
)


def test_plain_text_before_research_is_due_and_researches_the_question() -> None:
    assert floor.due(state(), TALK, last_planning_turn=False)
    assert floor.topics(state(), TALK, limit=6) == ["Is it worth it?"]


def test_a_reply_that_researches_or_plans_is_left_alone() -> None:
    research = AIMessage("", tool_calls=[call(RESEARCH, {"topic": "Costs of it"}, "r")])
    assert not floor.due(state(), research, last_planning_turn=True)
    assert not floor.due(state(), PLAN, last_planning_turn=False)
    assert floor.due(state(), PLAN, last_planning_turn=True), "a plan on the last chance"
    assert floor.topics(state(), PLAN, limit=6) == ["Costs"]


def test_a_thread_with_research_results_is_left_alone() -> None:
    done = state(
        messages=[HumanMessage("q"), ToolMessage("found", tool_call_id="r", name=RESEARCH)]
    )
    failed = state(
        messages=[
            HumanMessage("q"),
            ToolMessage("boom", tool_call_id="r", name=RESEARCH, status="error"),
        ]
    )
    assert not floor.due(done, TALK, last_planning_turn=False)
    assert floor.due(failed, TALK, last_planning_turn=False), "a failure is no research"


def test_pending_todos_come_before_the_question_and_done_ones_are_skipped() -> None:
    todos = [
        Todo(content="Done one", status="completed"),
        Todo(content="Open one", status="pending"),
    ]
    assert floor.topics(state(todos=todos), TALK, limit=6) == ["Open one"]


def test_question_parts_are_list_items_said_with_the_words_that_lead_in() -> None:
    question = "Compare Daikin and Mitsubishi heat pumps:\n1. Price\n2. Noise"
    assert floor.question_parts(question) == [
        "Compare Daikin and Mitsubishi heat pumps: Price",
        "Compare Daikin and Mitsubishi heat pumps: Noise",
    ]
    assert floor.question_parts("- heat pumps\n- gas boilers") == ["heat pumps", "gas boilers"]
    # Several questions in sentences stay one topic: the later ones lean on the first.
    assert floor.question_parts("What do they cost? How long do they last?") == []
    assert floor.question_parts("One question only?") == []


def test_topics_are_capped_cut_and_deduplicated() -> None:
    many = "Compare:\n" + "\n".join(f"- Part {i}" for i in range(10))
    chosen = floor.topics(state(question=many), TALK, limit=6)
    assert len(chosen) == floor.MAX_FLOOR_TOPICS
    assert floor.topics(state(question=many), TALK, limit=2) == [
        "Compare: Part 0",
        "Compare: Part 1",
    ]
    huge = "word " * 10_000
    [topic] = floor.topics(state(question=huge), TALK, limit=6)
    assert len(topic) <= TOPIC_CHARS and topic.endswith("word")
    same = "Compare:\n- Same\n- Same\n- SAME"
    assert floor.topics(state(question=same), TALK, limit=6) == ["Compare: Same"]


def test_a_blank_question_gives_no_topic() -> None:
    assert floor.topics(state(messages=[HumanMessage(" ")], question=" "), TALK, limit=6) == []


def test_the_research_calls_are_added_and_the_reply_keeps_its_own() -> None:
    bad = AIMessage("text", tool_calls=[call("browse", {"url": "x"}, "b")])
    reply = floor.research_reply(bad, ["A topic", "B topic"], Context(search_provider="ddgs"))
    assert reply.content == "text"
    assert [c["name"] for c in reply.tool_calls] == ["browse", RESEARCH, RESEARCH]
    ids = [c["id"] for c in reply.tool_calls[1:]]
    assert all(i and i.startswith("floor-") for i in ids) and len(set(ids)) == 2
    assert [c["args"] for c in reply.tool_calls[1:]] == [{"topic": "A topic"}, {"topic": "B topic"}]


def test_topics_dispatched_in_code_are_offered_the_scholarly_sources_where_the_run_has_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No model judged them (the floor's, an edited plan's): each is marked scholarly where
    `research` asks, and carries no flag where it does not."""
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    for settings, marked in (({}, True), ({"scholarly_sources": False}, False)):
        reply = floor.research_reply(AIMessage(""), ["A topic"], Context(**settings))
        assert reply.tool_calls[0]["args"] == {
            "topic": "A topic",
            **({"scholarly": True} if marked else {}),
        }
