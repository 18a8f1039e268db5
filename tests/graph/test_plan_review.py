"""Plan review with a scripted model: each resume kind, an edited plan, feedback and the
rounds cap."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deep_research.graph import builder
from tests.support.graph_scripts import LINK, script_for, tool_results
from tests.support.plan_review import (
    REVIEW,
    assert_every_call_answered_once,
    plan_calls,
    planner,
    research_reply,
    researched,
    start,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch


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
        return research_reply(["alpha", "beta"], 1)

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
    # No model judged the user's items: each is offered the scholarly sources `auto` has.
    dispatched = [
        call["args"]
        for message in state["messages"]
        if isinstance(message, AIMessage)
        for call in message.tool_calls
        if call["args"].get("topic") in ("gamma", "delta")
    ]
    assert dispatched == [{"topic": t, "scholarly": True} for t in ("gamma", "delta")]


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
