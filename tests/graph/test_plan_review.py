"""Plan review with a scripted model: each resume kind, the rounds cap, bad values, shares."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from deep_research.graph import builder
from deep_research.nodes.clarify import MAX_BAD_ANSWERS
from deep_research.nodes.dispatch import plan_of
from deep_research.nodes.plan_review import BadReview, read_review
from deep_research.text import limits
from tests.support.graph_scripts import LINK, call, script_for, tool_results
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

QUESTION = {"messages": [{"role": "user", "content": "How do heat pumps do in the cold?"}]}
REVIEW = {"allow_clarification": False, "review_plan": True}


def planner(first: str) -> Callable[[list[BaseMessage]], AIMessage]:
    """First reply: research topics ("research") or a todo list ("todos"); feedback gets a
    revised todo list; saved todos are researched. (A replaced plan is dispatched in code.)"""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        last, turn = messages[-1], sum(isinstance(m, AIMessage) for m in messages)
        if isinstance(last, HumanMessage) and "asked for changes" in str(last.content):
            todo = {"content": f"revised plan {turn}", "status": "pending"}
            return AIMessage("", tool_calls=[call("write_todos", {"todos": [todo]}, f"w{turn}")])
        if isinstance(last, ToolMessage) and str(last.content).startswith("Plan saved"):
            return _research(_saved_todos(messages), turn)
        if not tool_results(messages) or isinstance(last, HumanMessage):  # a new question
            if first == "research":
                return _research(["alpha", "beta"], turn)
            todos = [{"content": t, "status": "pending"} for t in ("alpha", "beta")]
            return AIMessage("", tool_calls=[call("write_todos", {"todos": todos}, "w0")])
        links = LINK.findall("\n".join(str(m.content) for m in tool_results(messages)))
        return AIMessage("# Report\n\n" + " ".join(f"[c]({u})" for u in links))

    return reply


def _saved_todos(messages: list[BaseMessage]) -> list[str]:
    """The pending todos of the last write_todos call (the saved plan is not repeated back)."""
    calls = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    todos = [c["args"]["todos"] for c in calls if c["name"] == "write_todos"][-1]
    return [t["content"] for t in todos if t.get("status", "pending") == "pending"]


def _research(topics: list[str], turn: int) -> AIMessage:
    calls = [call("research", {"topic": t}, f"r{turn}-{i}") for i, t in enumerate(topics)]
    return AIMessage("", tool_calls=calls)


def plan_calls(model: ScriptedChatModel) -> int:
    return sum("research" in tools for _, tools in model.calls)


def researched(model: ScriptedChatModel) -> list[str]:
    return [str(m[1].content) for m, tools in model.calls if "web_search" in tools and len(m) == 2]


def assert_every_call_answered_once(messages: list[BaseMessage]) -> None:
    ids = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answers = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert sorted(ids) == sorted(answers), (ids, answers)


async def start(graph: Any, thread: str, context: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    config = {"configurable": {"thread_id": thread}}
    out = await graph.ainvoke(QUESTION, config, context=context)
    return config, out


async def test_off_by_default_and_on_it_pauses_with_the_research_topics(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(planner("research")))
    graph = builder.compile(checkpointer=InMemorySaver())
    _, out = await start(graph, "off", {"allow_clarification": False})
    assert "__interrupt__" not in out and out["final_report"].startswith("# Report")
    _, out = await start(graph, "on", REVIEW)
    assert out["__interrupt__"][0].value == {
        "plan": [
            {"content": "alpha", "status": "pending"},
            {"content": "beta", "status": "pending"},
        ],
        "round": 1,
    }


async def test_ok_dispatches_the_paused_reply_without_planning_again_and_quotas_stay_exact(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(planner("research")))
    graph = builder.compile(checkpointer=InMemorySaver())
    context = {**REVIEW, "max_searches_per_run": 5}
    config, out = await start(graph, "ok", context)
    paused = (await graph.aget_state(config)).values
    assert paused["searches_used"] == 0, "held for review: counted only once approved"
    assert sum(s["searches"] for s in paused["shares"].values()) == 5
    assert plan_calls(model) == 1 and not scripted_search.queries
    out = await graph.ainvoke(Command(resume="ok"), config, context=context)
    assert out["final_report"].startswith("# Report")
    assert sorted(researched(model)) == ["alpha", "beta"]
    assert plan_calls(model) == 2, "the plan call is not repeated: the second one reports"
    state = (await graph.aget_state(config)).values
    assert state["searches_used"] == len(scripted_search.queries) == 2
    assert_every_call_answered_once(state["messages"])


async def test_a_list_replaces_the_todos_and_the_paused_research_never_runs(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(planner("research")))
    graph = builder.compile(checkpointer=InMemorySaver())
    config, _ = await start(graph, "replace", REVIEW)
    out = await graph.ainvoke(Command(resume=["  gamma  ", "", "delta"]), config, context=REVIEW)
    assert out["final_report"].startswith("# Report")
    state = (await graph.aget_state(config)).values
    assert state["todos"] == [  # the user's items, each ticked off as its research came back
        {"content": "gamma", "status": "completed"},
        {"content": "delta", "status": "completed"},
    ]
    assert sorted(researched(model)) == ["delta", "gamma"], "alpha and beta were not run"
    # The paused reply's shares were never counted: the count is exactly the searches sent.
    assert state["searches_used"] == len(scripted_search.queries) == 2
    assert_every_call_answered_once(state["messages"])
    not_run = [m for m in state["messages"] if isinstance(m, ToolMessage) and "Not run" in m.text]
    assert [m.tool_call_id for m in not_run] == ["r0-0", "r0-1"]


async def test_an_edited_plan_is_researched_in_code_even_by_a_model_that_ignores_it(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    """The user's items are dispatched as approving dispatches: no model call in between, so a
    small model that answers the edited plan with a report cannot skip it."""

    def ignores_edits(messages: list[BaseMessage]) -> AIMessage:
        if tool_results(messages) and not any(
            isinstance(m, ToolMessage) and "Not run" in m.text for m in messages[-2:]
        ):
            links = LINK.findall("\n".join(str(m.content) for m in tool_results(messages)))
            return AIMessage("# Report\n\n" + " ".join(f"[c]({u})" for u in links))
        if any("replaced it" in str(m.content) for m in messages if isinstance(m, HumanMessage)):
            return AIMessage("# Report\n\nNothing to research.")
        return _research(["alpha", "beta"], 1)

    model = use_script(script_for(ignores_edits))
    graph = builder.compile(checkpointer=InMemorySaver())
    config, _ = await start(graph, "edited", REVIEW)
    out = await graph.ainvoke(Command(resume=["gamma", "delta"]), config, context=REVIEW)
    assert sorted(researched(model)) == ["delta", "gamma"]
    assert sorted(scripted_search.queries) and plan_calls(model) == 2, "plan, then the report"
    state = (await graph.aget_state(config)).values
    assert out["final_report"].startswith("# Report") and state["plan_edited"] is False
    assert state["orchestrator_turns"] == 2, "the edited plan took the reviewed reply's turn"
    assert state["searches_used"] == len(scripted_search.queries) == 2
    assert_every_call_answered_once(state["messages"])


async def test_an_edited_plan_longer_than_a_reply_may_research_leaves_the_rest_pending(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(planner("research")))
    graph = builder.compile(checkpointer=InMemorySaver())
    context = {**REVIEW, "max_research_calls_per_reply": 2}
    config, _ = await start(graph, "long", context)
    edited = ["one", "two", "three", "four"]
    await graph.ainvoke(Command(resume=edited), config, context=context)
    first = [
        m
        for m in (await graph.aget_state(config)).values["messages"]
        if isinstance(m, AIMessage) and m.tool_calls
    ][1]
    assert [c["args"]["topic"] for c in first.tool_calls] == ["one", "two"]
    assert set(researched(model)) >= {"one", "two"}


async def test_feedback_revises_and_asks_again_until_the_rounds_cap(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(planner("todos")))
    graph = builder.compile(checkpointer=InMemorySaver())
    config, out = await start(graph, "feedback", REVIEW)
    assert out["__interrupt__"][0].value["plan"][0]["content"] == "alpha"
    out = await graph.ainvoke(Command(resume={"feedback": "add costs"}), config, context=REVIEW)
    assert out["__interrupt__"][0].value == {
        "plan": [{"content": "revised plan 1", "status": "pending"}],
        "round": 2,
    }
    out = await graph.ainvoke(Command(resume={"feedback": "shorter"}), config, context=REVIEW)
    assert "__interrupt__" not in out, "two rounds (the default): the revised plan runs"
    assert out["final_report"].startswith("# Report")
    state = (await graph.aget_state(config)).values
    assert state["plan_review_rounds"] == 2 and state["todos"][0]["content"] == "revised plan 2"
    asks = [m.text for m in state["messages"] if isinstance(m, HumanMessage)]
    assert "add costs" in asks[1] and "last review" not in asks[1]
    assert "shorter" in asks[2] and "last review (2 of 2)" in asks[2]
    assert researched(model) == ["revised plan 2"]
    assert state["searches_used"] == len(scripted_search.queries)
    assert_every_call_answered_once(state["messages"])


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
