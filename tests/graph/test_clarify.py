"""Clarification with a scripted chat model: interrupts, resumes, rounds, tolerant parsing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deep_research.graph import builder
from deep_research.nodes.clarify import UnreadableDecision, read_answer, read_decision
from tests.support.graph_scripts import NO_CLARIFY, orchestrator_fanning_out, run, script_for
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch


def clarifying_script(answered_marker: str) -> Callable[[list[BaseMessage], set[str]], AIMessage]:
    base = script_for(orchestrator_fanning_out("alpha"))

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        system = str(messages[0].content)
        if not tools and "intake step" in system:
            if any(answered_marker in str(m.content) for m in messages):
                return AIMessage('{"need_clarification": false, "verification": "Researching."}')
            return AIMessage(
                'Let me think.\n```json\n{"need_clarification": true, '
                '"questions": ["Which climate?", "Which budget?"]}\n```'
            )
        return base(messages, tools)

    return script


async def test_clarifier_interrupts_rejects_bad_resume_and_never_repeats_its_call(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(clarifying_script("Nordic"))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "clarify"}}
    context = {"max_clarification_rounds": 2}
    out = await graph.ainvoke(
        {"messages": [{"role": "user", "content": "heat pumps"}]}, config, context=context
    )
    assert out["__interrupt__"][0].value == {
        "questions": ["Which climate?", "Which budget?"],
        "round": 1,
    }
    calls_before = len(model.calls)
    out = await graph.ainvoke(Command(resume={"reply": "x"}), config, context=context)
    interrupt = out["__interrupt__"][0].value
    assert interrupt["questions"] == ["Which climate?", "Which budget?"]
    assert "error" in interrupt and '{"answer"' in interrupt["error"]
    assert len(model.calls) == calls_before, "a bad resume makes no model call"
    out = await graph.ainvoke(
        Command(resume={"answer": "Nordic, mid-range"}), config, context=context
    )
    assert "final_report" in out
    clarifier_calls = [m for m, tools in model.calls if "intake step" in str(m[0].content)]
    assert len(clarifier_calls) == 2
    assert not any("Nordic" in str(x.content) for x in clarifier_calls[0])
    assert any("Nordic" in str(x.content) for x in clarifier_calls[1])


async def test_clarification_can_be_switched_off(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(clarifying_script("never"))
    out = await run(NO_CLARIFY)
    assert "final_report" in out
    assert not any("intake step" in str(m[0].content) for m, _ in model.calls)


async def test_clarification_rounds_are_capped(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(clarifying_script("never-answered-marker"))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "rounds"}}
    out = await graph.ainvoke(
        {"messages": [{"role": "user", "content": "q"}]},
        config,
        context={"max_clarification_rounds": 1},
    )
    out = await graph.ainvoke(
        Command(resume="an answer"), config, context={"max_clarification_rounds": 1}
    )
    assert "final_report" in out
    assert sum("intake step" in str(m[0].content) for m, _ in model.calls) == 1


def test_read_decision_tolerates_prose_fences_think_and_truncation() -> None:
    cases = [
        '{"need_clarification": true, "questions": ["A?"]}',
        'Sure!\n```json\n{"need_clarification": true, "questions": ["A?"]}\n```',
        '<think>{"need_clarification": false}</think>{"need_clarification": true, '
        '"questions": ["A?"]}',
        '{"need_clarification": true, "questions": ["A?"',
        "{'need_clarification': True, 'questions': ['A?']}",
    ]
    for text in cases:
        decision = read_decision(text)
        assert decision.need_clarification and decision.questions == ["A?"], text
    with pytest.raises(UnreadableDecision, match="no JSON object"):
        read_decision("I have no idea")


def test_read_decision_keeps_a_think_tag_inside_the_json() -> None:
    text = '{"need_clarification": false, "verification": "How models use <think> tags."}'
    decision = read_decision(text)
    assert decision.verification == "How models use <think> tags."


def test_read_answer_accepts_only_documented_shapes() -> None:
    assert read_answer(" Nordic ") == "Nordic"
    assert read_answer({"answer": "Nordic"}) == "Nordic"
    for bad in [None, 42, "", {"reply": "x"}, {"answer": "x", "extra": 1}, ["x"]]:
        assert read_answer(bad) is None
