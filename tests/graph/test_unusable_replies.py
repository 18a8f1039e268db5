"""Unusable replies: the clarifier's retry and default, empty replies nudged then reported."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.graph_scripts import orchestrator_fanning_out, researcher, script_for
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

QUESTION = {"messages": [{"role": "user", "content": "heat pumps"}]}


def clarifier_script(replies: list[str]) -> Callable[[list[BaseMessage], set[str]], AIMessage]:
    """The clarifier answers with `replies` in turn; other roles run a normal research run."""
    base = script_for(orchestrator_fanning_out("alpha topic"))

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        if not tools and "intake step" in str(messages[0].content):
            return AIMessage(replies.pop(0))
        return base(messages, tools)

    return script


async def test_an_unreadable_decision_is_retried_with_its_error(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(
        clarifier_script(
            [
                'Sure! {"need_clarification": "perhaps", "questions": ["Which climate?"]}',
                '{"need_clarification": true, "questions": ["Which climate?"]}',
            ]
        )
    )
    graph = builder.compile(checkpointer=InMemorySaver())
    out = await graph.ainvoke(QUESTION, {"configurable": {"thread_id": "retry"}})
    assert out["__interrupt__"][0].value["questions"] == ["Which climate?"]
    retry = [m for m, _ in model.calls if "intake step" in str(m[0].content)][1]
    shown = str(retry[-1].content)
    assert isinstance(retry[-1], HumanMessage) and "need_clarification" in shown
    assert "valid boolean" in shown, "the model is shown what was wrong"
    assert "perhaps" in str(retry[-2].content), "and its own reply"


async def test_two_unreadable_decisions_proceed_without_questions_and_say_so(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    use_script(clarifier_script(["I think we are fine.", "No JSON today either."]))
    with caplog.at_level(logging.WARNING, logger="deep_research.nodes.clarify"):
        out = await builder.compile().ainvoke(QUESTION)
    assert "__interrupt__" not in out and out["final_report"].startswith("# Report")
    assert "proceeding without questions" in caplog.text
    assert "no JSON object" in caplog.text


async def test_an_empty_clarifier_is_nudged_then_the_run_proceeds(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = use_script(clarifier_script(["", "<think>hmm</think>"]))
    with caplog.at_level(logging.WARNING):
        out = await builder.compile().ainvoke(QUESTION)
    assert out["final_report"].startswith("# Report")
    nudged = [m for m, _ in model.calls if "intake step" in str(m[0].content)][1]
    assert "Your last reply was empty" in str(nudged[-1].content)
    assert "returned an empty reply twice" in caplog.text


async def test_a_researcher_that_stays_empty_becomes_a_named_research_gap(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def silent_on_one_topic(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage("") if "silent" in str(messages[1].content) else researcher(messages)

    # The floor searches the silent topic (researcher/floor.py); its search fails, so there
    # is nothing to quote either, and the topic is a gap.
    silent = "FAIL_SEARCH silent topic"
    use_script(script_for(orchestrator_fanning_out("loud topic", silent), silent_on_one_topic))
    out = await builder.compile().ainvoke(QUESTION, context={"allow_clarification": False})
    assert [f["topic"] for f in out["failures"]] == [silent]
    assert "EmptyReplyError" in out["failures"][0]["error"]
    assert "## Research gaps" in out["final_report"] and "loud-topic" in out["final_report"]


async def test_a_researcher_that_stays_empty_after_reading_gives_the_passages_read(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def silent_on_one_topic(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage("") if "silent" in str(messages[1].content) else researcher(messages)

    use_script(
        script_for(orchestrator_fanning_out("loud topic", "silent topic"), silent_on_one_topic)
    )
    out = await builder.compile().ainvoke(QUESTION, context={"allow_clarification": False})
    assert not out["failures"] and "silent topic" in scripted_search.queries
    # Its findings are the passages it read, quoted and linked: the report cites them.
    assert "example.org/silent-topic" in out["final_report"]
