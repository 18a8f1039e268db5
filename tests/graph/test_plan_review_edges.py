"""Plan review at its edges: bad values asked again until the cap, a resume in a new
process, the shapes a review may take, a new question on a paused plan, and huge or long
plans shown cut and sent back whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from deep_research.graph import builder
from deep_research.nodes.clarify import MAX_BAD_ANSWERS
from deep_research.nodes.dispatch import plan_of
from deep_research.nodes.plan_review import BadReview, read_review
from deep_research.text import limits
from tests.support.graph_scripts import call, script_for
from tests.support.plan_review import (
    QUESTION,
    REVIEW,
    assert_every_call_answered_once,
    plan_calls,
    planner,
    researched,
    start,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch


async def test_bad_values_are_asked_again_with_the_same_plan_and_an_error(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(planner("todos")))
    graph = builder.compile(checkpointer=InMemorySaver())
    config, out = await start(graph, "bad", REVIEW)
    plan = out["__interrupt__"][0].value["plan"]
    nested: list[Any] = []
    for _ in range(200):  # deeper than 255 levels, msgpack refuses it before any node runs
        nested = [nested]
    for bad in ["nope", nested, {"feedback": ""}, ["a"] * 10_000]:
        out = await graph.ainvoke(Command(resume=bad), config, context=REVIEW)
        value = out["__interrupt__"][0].value
        assert value["plan"] == plan and value["round"] == 1
        assert '"ok"' in value["error"] and len(value["error"]) < 400
    assert plan_calls(model) == 1, "a bad resume makes no model call"
    out = await graph.ainvoke(Command(resume="OK"), config, context=REVIEW)
    assert out["final_report"].startswith("# Report")


async def test_after_too_many_bad_values_the_plan_runs(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(planner("research")))
    graph = builder.compile(checkpointer=InMemorySaver())
    context = {**REVIEW, "max_searches_per_run": 5}
    config, out = await start(graph, "stuck", context)
    for _ in range(MAX_BAD_ANSWERS):
        out = await graph.ainvoke(Command(resume=42), config, context=context)
    assert "__interrupt__" not in out and out["final_report"].startswith("# Report")
    state = (await graph.aget_state(config)).values
    assert state["searches_used"] == len(scripted_search.queries) == 2


async def test_a_resume_in_a_new_process_does_not_repeat_the_plan_call(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    tmp_path: Path,
) -> None:
    model = use_script(script_for(planner("research")))
    database = str(tmp_path / "checkpoints.sqlite")
    async with AsyncSqliteSaver.from_conn_string(database) as saver:
        config, out = await start(builder.compile(checkpointer=saver), "durable", REVIEW)
        assert out["__interrupt__"][0].value["round"] == 1
    assert plan_calls(model) == 1
    # A fresh graph and checkpointer, as after the process was killed at the prompt.
    async with AsyncSqliteSaver.from_conn_string(database) as saver:
        graph = builder.compile(checkpointer=saver)
        out = await graph.ainvoke(Command(resume="ok"), config, context=REVIEW)
        state = (await graph.aget_state(config)).values
    assert out["final_report"].startswith("# Report")
    assert plan_calls(model) == 2 and sorted(researched(model)) == ["alpha", "beta"]
    assert state["searches_used"] == len(scripted_search.queries) == 2


def test_read_review_accepts_only_the_documented_shapes() -> None:
    assert read_review(" ok ").kind == "ok"
    assert read_review(["a", " b "]).items == ("a", "b")
    assert read_review({"feedback": " more "}).feedback == "more"
    long = read_review(["x" * 100_000]).items[0]
    assert len(long) < limits.PLAN_ITEM_CHARS + 60 and "[cut:" in long
    assert len(read_review({"feedback": "y" * 10**6}).feedback) < limits.USER_TEXT_CHARS + 60
    deep_list: Any = ["a"]
    deep_dict: Any = "a"
    for _ in range(100_000):  # deeper than Python's recursion limit
        deep_list, deep_dict = [deep_list], {"feedback": deep_dict}
    bad: list[object] = [
        None,
        42,
        "",
        "yes please",
        [],
        ["", "  "],
        ["a", 1],
        [["nested"]],
        ["a"] * (limits.MAX_PLAN_ITEMS + 1),
        {"feedback": 5},
        {"feedback": "a", "extra": 1},
        {"answer": "ok"},
        "x" * 10**6,
        deep_list,
        deep_dict,
    ]
    for value in bad:
        with pytest.raises(BadReview) as caught:
            read_review(value)
        assert len(str(caught.value)) < 200


async def test_a_new_question_at_the_prompt_answers_the_paused_calls_first(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(planner("research")))
    graph = builder.compile(checkpointer=InMemorySaver())
    config, _ = await start(graph, "follow-up", REVIEW)
    follow_up = {"messages": [{"role": "user", "content": "And in Canada?"}]}
    out = await graph.ainvoke(follow_up, config, context=REVIEW)
    assert out["__interrupt__"][0].value["round"] == 1, "the new question's plan is reviewed"
    out = await graph.ainvoke(Command(resume="ok"), config, context=REVIEW)
    assert out["final_report"].startswith("# Report")
    messages = (await graph.aget_state(config)).values["messages"]
    assert_every_call_answered_once(messages)
    kinds = [type(m).__name__ for m in messages[:5]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "HumanMessage"]
    assert messages[4].text == "And in Canada?"
    # Every request the model got had each call answered, before any later message.
    for sent, _ in model.calls:
        assert_every_call_answered_once(sent)


def test_a_huge_todo_from_the_model_is_shown_cut() -> None:
    todos = [{"content": "z" * 1_000_000, "status": "pending"}]
    reply = AIMessage("", tool_calls=[call("write_todos", {"todos": todos}, "w0")])
    [item] = plan_of({"messages": [reply]}, reply)  # type: ignore[typeddict-item]
    assert len(item["content"]) < limits.PLAN_ITEM_CHARS + 60 and "[cut:" in item["content"]


async def test_a_new_question_on_a_paused_plan_gets_the_searches_the_plan_never_sent(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(planner("research")))
    graph = builder.compile(checkpointer=InMemorySaver())
    context = {**REVIEW, "max_searches_per_run": 5}
    config, _ = await start(graph, "budget", context)
    follow_up = {"messages": [{"role": "user", "content": "And in Canada?"}]}
    await graph.ainvoke(follow_up, config, context=context)
    paused = (await graph.aget_state(config)).values
    assert paused["searches_used"] == 0, "neither paused plan's shares count yet"
    assert sum(s["searches"] for s in paused["shares"].values()) == 5, (
        "the first plan sent nothing: all 5 are left"
    )
    out = await graph.ainvoke(Command(resume="ok"), config, context=context)
    assert out["final_report"].startswith("# Report")
    state = (await graph.aget_state(config)).values
    assert state["searches_used"] == len(scripted_search.queries) == 2


@pytest.mark.slow
async def test_a_plan_as_long_as_the_one_shown_can_be_sent_back_edited(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    # The model may write more todos than a user's list may have: editing one item and
    # keeping the rest must not be refused for the length the model chose.
    many = limits.MAX_PLAN_ITEMS + 5
    todos = [{"content": f"todo {n}", "status": "pending"} for n in range(many)]
    first = AIMessage("", tool_calls=[call("write_todos", {"todos": todos}, "w0")])
    later = planner("research")
    question = QUESTION["messages"][0]["content"]

    def reply(messages: list[BaseMessage]) -> AIMessage:
        return first if [m.text for m in messages[1:]] == [question] else later(messages)

    use_script(script_for(reply))
    graph = builder.compile(checkpointer=InMemorySaver())
    config, out = await start(graph, "long", REVIEW)
    shown = [item["content"] for item in out["__interrupt__"][0].value["plan"]]
    assert len(shown) == many
    edited = ["todo zero", *shown[1:]]
    out = await graph.ainvoke(Command(resume=edited), config, context=REVIEW)
    assert "__interrupt__" not in out, out["__interrupt__"][0].value.get("error")
    state = (await graph.aget_state(config)).values
    assert [t["content"] for t in state["todos"]] == edited
    with pytest.raises(BadReview):  # a longer one is still refused
        read_review(["x"] * (many + 1), max_items=many)
