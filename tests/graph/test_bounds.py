"""Counts and sizes bounded in the graph (scripted chat model): research calls per reply,
clarifier questions, researcher reports and the report writer's findings."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.text.limits import FINDINGS_CHARS, QUESTION_CHARS, REPORT_CHARS
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    researcher,
    run,
    script_for,
    tool_results,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

CUT_NOTE = "more characters]"


@pytest.mark.slow
async def test_a_reply_with_2000_research_calls_runs_six_and_answers_the_rest_with_the_limit(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    topics = [f"topic number {i}" for i in range(2000)]
    model = use_script(script_for(orchestrator_fanning_out(*topics)))
    out = await run(NO_CLARIFY)
    researchers = [m for m, tools in model.calls if "web_search" in tools and not tool_results(m)]
    assert sorted(str(m[1].content) for m in researchers) == sorted(topics[:6])
    assert len(scripted_search.queries) == 6
    answers = tool_results(out["messages"])
    assert Counter(m.tool_call_id for m in answers) == Counter(f"r{i}" for i in range(2000)), (
        "every call gets exactly one answer"
    )
    orchestrator_requests = [m for m, tools in model.calls if "research" in tools]
    seen = tool_results(orchestrator_requests[1])
    refused = [m for m in seen if m.status == "error"]
    assert len(refused) == 1994
    assert all(
        "at most 6 research calls (max_research_calls_per_reply)" in str(m.content)
        and "Call research again in your next reply" in str(m.content)
        for m in refused
    )
    assert {m.tool_call_id for m in seen if m.status != "error"} == {f"r{i}" for i in range(6)}
    assert out["final_report"].startswith("# Report")


async def test_only_runnable_calls_use_the_limit(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        if tool_results(messages):
            return AIMessage("# Report\n\ndone")
        calls = [call("research", {"subject": "no topic"}, "bad")]
        calls += [call("research", {"topic": f"topic {n}"}, n) for n in ("a", "b", "c")]
        return AIMessage("", tool_calls=calls)

    use_script(script_for(orchestrator))
    out = await run({**NO_CLARIFY, "max_research_calls_per_reply": 2})
    answers = {m.tool_call_id: m for m in tool_results(out["messages"])}
    assert "Invalid arguments" in str(answers["bad"].content)
    assert answers["a"].status == answers["b"].status == "success"
    assert answers["c"].status == "error" and "at most 2 research calls" in str(
        answers["c"].content
    )
    assert sorted(scripted_search.queries) == ["topic a q0", "topic b q0"]


async def test_clarifier_questions_are_few_and_short(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    base = script_for(orchestrator_fanning_out("alpha"))
    asked = [f"Question {i}: " + "which climate? " * 2_000 for i in range(10)]

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        if not tools and "intake step" in str(messages[0].content):
            return AIMessage(json.dumps({"need_clarification": True, "questions": asked}))
        return base(messages, tools)

    use_script(script)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "questions"}}
    out = await graph.ainvoke({"messages": [{"role": "user", "content": "q"}]}, config)
    questions = out["__interrupt__"][0].value["questions"]
    assert [q[:11] for q in questions] == ["Question 0:", "Question 1:", "Question 2:"]
    assert all(len(q) <= QUESTION_CHARS and q.endswith(CUT_NOTE) for q in questions)


@pytest.mark.slow
async def test_long_reports_are_cut_for_the_orchestrator_and_every_one_reaches_the_writer(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def verbose(messages: list[BaseMessage]) -> AIMessage:
        reply = researcher(messages)
        if reply.tool_calls:
            return reply
        topic = str(messages[1].content)
        return AIMessage(f"Report on {topic}. {reply.content} " + "More detail. " * 3_000)

    def fan_out(messages: list[BaseMessage]) -> AIMessage:
        n = len(tool_results(messages))
        calls = [call("research", {"topic": f"topic {n + i}"}, f"r{n + i}") for i in range(6)]
        return AIMessage("", tool_calls=calls)

    model = use_script(script_for(fan_out, verbose))
    # The single report call reads every topic's findings (a section reads its own).
    out = await run({**NO_CLARIFY, "max_orchestrator_turns": 3, "report_in_sections": "off"})
    reports = tool_results(out["messages"])
    assert len(reports) == 12
    assert all(len(str(r.content)) <= REPORT_CHARS and CUT_NOTE in str(r.content) for r in reports)
    [findings] = [
        str(m[1].content)
        for m, _ in model.calls
        if isinstance(m[0], SystemMessage) and "research phase is over" in str(m[0].content)
    ]
    assert FINDINGS_CHARS - 1_000 < len(findings) <= FINDINGS_CHARS
    assert all(f"Report on topic {i}." in findings for i in range(12)), "none is dropped"
    assert findings.count(CUT_NOTE) == 12
