"""The clarifier node called directly: its decision, its retry, its bounds and its router."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from deep_research.config.settings import Context
from deep_research.nodes.clarify import SHOWN_CHARS, clarify, route_clarify, shown
from deep_research.runtime import progress
from deep_research.text import limits
from tests.support.scripted_model import Script, ScriptedChatModel

UseScript = Callable[[Script], ScriptedChatModel]


def state(**fields: Any) -> Any:
    return {"messages": [HumanMessage("Are heat pumps worth it?")], **fields}


def replying(*texts: str) -> Script:
    replies = iter(texts)
    return lambda messages, tools: AIMessage(next(replies))


async def test_questions_are_stripped_cut_and_capped(use_script: UseScript) -> None:
    asked = ["  Where?  ", " ", "x" * 2 * limits.QUESTION_CHARS, "a", "b", "c"]
    use_script(replying(json.dumps({"need_clarification": True, "questions": asked})))
    update = await clarify(state(), Runtime(context=Context()))
    questions = update["pending_questions"]
    assert questions[0] == "Where?" and len(questions) == limits.MAX_QUESTIONS
    assert len(questions[1]) <= limits.QUESTION_CHARS


async def test_no_questions_needed_says_what_will_be_researched(use_script: UseScript) -> None:
    use_script(replying('{"need_clarification": false, "verification": " Heat pumps. "}'))
    update = await clarify(state(), Runtime(context=Context()))
    assert update["pending_questions"] == []
    [said] = update["messages"]
    assert said.content == "Heat pumps." and said.name == "clarifier"


async def test_an_unreadable_reply_is_asked_again_with_its_problem(use_script: UseScript) -> None:
    model = use_script(
        replying("no json here", '{"need_clarification": true, "questions": ["Q?"]}')
    )
    update = await clarify(state(), Runtime(context=Context()))
    assert update.pop("usage")["calls"] == 2 and update.pop("cost_counted") == 0  # local: free
    assert update == {"pending_questions": ["Q?"]}
    retry: list[BaseMessage] = model.calls[1][0]
    assert "no JSON object" in str(retry[-1].content)


async def test_two_unreadable_replies_proceed_without_questions_and_say_so(
    use_script: UseScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[dict[str, Any]] = []
    monkeypatch.setattr(progress, "get_stream_writer", lambda: events.append)
    model = use_script(replying("nothing", "still nothing"))
    update = await clarify(state(), Runtime(context=Context()))
    assert update.pop("usage")["calls"] == 2 and update.pop("cost_counted") == 0
    assert update == {"pending_questions": []}
    assert len(model.calls) == 2
    assert [e for e in events if e["event"] == "clarifier_gave_up"] == [
        {"event": "clarifier_gave_up", "reason": "its reply was not a readable decision, twice"}
    ]


async def test_switched_off_or_out_of_rounds_asks_no_model(use_script: UseScript) -> None:
    model = use_script(replying())
    off = Runtime(context=Context(allow_clarification=False))
    assert (await clarify(state(), off))["pending_questions"] == []
    spent = state(clarification_rounds=Context().max_clarification_rounds)
    update = await clarify(spent, Runtime(context=Context()))
    assert update == {"pending_questions": []}
    assert model.calls == []


def test_route_asks_the_user_only_with_questions_pending() -> None:
    assert route_clarify(state(pending_questions=["Q?"])) == "ask_user"
    assert route_clarify(state(pending_questions=[])) == "orchestrate"
    assert route_clarify(state()) == "orchestrate"
    assert route_clarify(state(pending_questions=None)) == "clarify", "stopped mid-call"


def test_a_rejected_value_is_shown_bounded_whatever_it_is() -> None:
    deep: list[Any] = []
    for _ in range(2_000):
        deep = [deep]
    assert len(shown(deep)) <= SHOWN_CHARS
    assert len(shown("y" * 10_000)) <= SHOWN_CHARS

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    # Answered all the same: the user gets a new interrupt, not a crashed node.
    assert "Broken" in shown(Broken()) and len(shown(Broken())) <= SHOWN_CHARS


async def test_the_clarifier_may_ask_about_form_only_while_nothing_fixed_it(
    use_script: UseScript,
) -> None:
    decision = json.dumps({"need_clarification": False, "questions": [], "verification": "ok"})
    model = use_script(replying(decision, decision))
    await clarify(state(), Runtime(context=Context()))
    await clarify(state(), Runtime(context=Context(report_length="brief")))
    open_form, fixed = (str(messages[0].content) for messages, _ in model.calls[-2:])
    assert "you may add ONE" in open_form and "never ask about the form alone" in open_form
    assert "fix it (brief, 150-400 words): never ask about it." in fixed
    assert "you may add ONE" not in fixed
