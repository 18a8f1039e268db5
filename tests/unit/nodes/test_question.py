"""`new_question` called directly: what a new question resets, cuts, answers and refuses."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime

from deep_research import embedding
from deep_research.config.settings import Context
from deep_research.nodes.question import NOT_RUN, EmptyQuestionError, new_question
from deep_research.runtime import http
from deep_research.text import limits

RUNTIME = Runtime(context=Context(max_searches_per_run=0))


@pytest.fixture(autouse=True)
def tls_prepared(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    calls: list[bool] = []
    monkeypatch.setattr(http, "prepare_tls", lambda: calls.append(True))
    return calls


@pytest.fixture(autouse=True)
def warm_ups(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    calls: list[bool] = []  # each warm-up's `download`
    monkeypatch.setattr(embedding, "warm_up", lambda *, download, after: calls.append(download))
    return calls


def asked(*messages: Any) -> Any:
    return {"messages": list(messages), "orchestrator_turns": 7, "plan_reviewed": True}


@pytest.mark.parametrize(
    "messages", [[], [AIMessage("hi")], [HumanMessage(" \n ")], [HumanMessage("Q?"), AIMessage("")]]
)
def test_an_input_without_a_user_question_is_refused(messages: list[Any]) -> None:
    with pytest.raises(EmptyQuestionError, match="no question"):
        new_question(asked(*messages), RUNTIME)


def test_a_question_starts_its_own_plan_turns_and_gaps(
    tls_prepared: list[bool],
) -> None:
    update = new_question(asked(HumanMessage("Q?", id="q")), RUNTIME)
    assert tls_prepared == [True], "the CA bundle read before the first model client needs it"
    # A follow-up that ends without `finalize` must not return the previous report (#39).
    assert update["final_report"] == ""
    assert update["orchestrator_turns"] == 0 and update["plan_reviewed"] is False
    assert update["todos"] == [] and update["failures"] is None  # None resets the list
    assert "messages" not in update and "sources" not in update  # sources stay per thread


def test_an_over_long_question_is_replaced_cut_under_its_own_id() -> None:
    update = new_question(asked(HumanMessage("x" * 10_000, id="q")), RUNTIME)
    [replaced] = update["messages"]
    assert replaced.id == "q" and len(replaced.text) <= limits.USER_TEXT_CHARS


def test_earlier_blank_questions_are_removed() -> None:
    update = new_question(asked(HumanMessage(" ", id="b"), HumanMessage("Q?", id="q")), RUNTIME)
    assert [(type(m), m.id) for m in update["messages"]] == [(RemoveMessage, "b")]


def test_unanswered_calls_are_answered_before_the_question_moves_after_them() -> None:
    paused = AIMessage(
        "",
        tool_calls=[
            ToolCall(name="research", args={}, id="r1"),
            ToolCall(name="x", args={}, id="r2"),
        ],
    )
    answered = ToolMessage("done", tool_call_id="r2")
    update = new_question(asked(paused, answered, HumanMessage("Q?", id="q")), RUNTIME)
    removed, not_run, moved = update["messages"]
    assert isinstance(removed, RemoveMessage) and removed.id == "q"
    assert isinstance(not_run, ToolMessage) and not_run.tool_call_id == "r1"
    assert not_run.content == NOT_RUN and not_run.status == "error"
    assert isinstance(moved, HumanMessage) and moved.text == "Q?" and moved.id != "q"


def test_the_embedder_warms_up_only_when_the_run_may_search(warm_ups: list[bool]) -> None:
    new_question(asked(HumanMessage("Q?")), RUNTIME)
    assert warm_ups == []
    new_question(asked(HumanMessage("Q?")), Runtime(context=Context(max_searches_per_run=2)))
    assert warm_ups == [True], "scoring results may fetch the model"


def test_without_filtering_the_model_is_warmed_for_memory_alone_and_never_fetched(
    warm_ups: list[bool],
) -> None:
    unscored = Context(max_searches_per_run=2, relevance_filter=False, use_memory=True)
    new_question(asked(HumanMessage("Q?")), Runtime(context=unscored))
    assert warm_ups == [False]
    neither = Context(max_searches_per_run=2, relevance_filter=False, use_memory=False)
    new_question(asked(HumanMessage("Q?")), Runtime(context=neither))
    assert warm_ups == [False], "nothing needs the model: no warm-up"
