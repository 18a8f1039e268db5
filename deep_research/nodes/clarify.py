"""Clarification: one node asks the model, the next asks the user through `interrupt()`.

They are separate because a node re-runs from its start on resume: keeping the model call
out of the interrupting node means answering the questions never repeats that call.
"""

from __future__ import annotations

import logging
import reprlib
from collections.abc import Sequence
from typing import Any, Literal

import json_repair
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import BaseModel, Field, ValidationError

from deep_research.config.settings import Context, context_of
from deep_research.errors import DeepResearchError
from deep_research.llm import models, spending, toolcalls
from deep_research.nodes import report_form
from deep_research.runtime import durable, process, progress, prompts
from deep_research.state import ResearchState
from deep_research.text import limits

log = logging.getLogger(__name__)

# A thread must never stay stuck on bad resume values; after this many we go on without.
MAX_BAD_ANSWERS = 5
ANSWER_SHAPES = 'Resume with a string, or with {"answer": "<your answers>"}.'
SHOWN_CHARS = 80  # of a rejected resume value, in the new interrupt's error


def _bounded_repr() -> reprlib.Repr:
    # `repr()` recurses (a value nested 1,000 deep raises RecursionError) and builds the whole
    # text of a huge value before it could be cut; reprlib stops at a depth and a length.
    shown = reprlib.Repr()
    shown.maxlevel = 3
    shown.maxstring = shown.maxother = SHOWN_CHARS
    return shown


_SHOWN = _bounded_repr()


class ClarifyDecision(BaseModel):
    need_clarification: bool = Field(description="True when an answer would change the research")
    questions: list[str] = Field(default_factory=list, description="2-3 short questions")
    verification: str = Field(default="", description="What will be researched, in a sentence")


class UnreadableDecision(DeepResearchError, ValueError):
    """The clarifier's reply holds no valid decision; the message says what is wrong."""


def read_decision(text: str) -> ClarifyDecision:
    """The model's JSON decision; `UnreadableDecision` names the problem in one line."""
    # Only reasoning that opens the reply goes: a `<think>` inside the JSON is its text.
    visible = toolcalls.strip_think(text)
    start = visible.find("{")
    if start < 0:
        raise UnreadableDecision("the reply contains no JSON object")
    # json_repair closes truncated objects and ignores trailing prose or fences.
    parsed = json_repair.loads(visible[start:])
    if isinstance(parsed, list):
        parsed = next((item for item in parsed if isinstance(item, dict)), None)
    try:
        return ClarifyDecision.model_validate(parsed)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the object"
        raise UnreadableDecision(f"{where}: {first['msg']}") from None


def wants_questions(state: ResearchState, context: Context) -> bool:
    """Whether `clarify` asks the model at all (else it goes on without questions)."""
    rounds = state.get("clarification_rounds", 0)
    return context.allow_clarification and rounds < context.max_clarification_rounds


def clarifier_messages(state: ResearchState, context: Context) -> list[BaseMessage]:
    system = prompts.render("clarifier", form=report_form.clarifier_form(context))
    return [SystemMessage(system), *state["messages"]]


async def clarify(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the model whether the request needs clarifying questions.

    A step that runs again after a stop, whose call has no saved answer, counts that call at
    its worst case and runs again (`models.CallLost`; `pending_questions` None routes back)."""
    context = context_of(runtime)
    here = durable.top_scope()
    ledger = spending.Ledger(
        spending.micros_of(context.max_cost_usd),
        state.get("cost_counted", 0),
        fresh=process.take_over(here, ""),
    )
    if not wants_questions(state, context):
        process.hand_over(here, "")
        return {"pending_questions": []}
    try:
        decision = await _decide(context, clarifier_messages(state, context), ledger)
    except models.CallLost:
        process.hand_over(here, "")  # the next start is fresh
        return {"pending_questions": None, **ledger.update()}
    process.hand_over(here, "")  # the step's end: the next one starts fresh
    spent = ledger.update()
    if decision is None:
        return {"pending_questions": [], **spent}
    questions = [
        limits.cut(q.strip(), limits.QUESTION_CHARS) for q in decision.questions if q.strip()
    ][: limits.MAX_QUESTIONS]
    if decision.need_clarification and questions:
        return {"pending_questions": questions, **spent}
    update: dict[str, Any] = {"pending_questions": [], **spent}
    if verification := limits.cut(decision.verification.strip(), limits.QUESTION_CHARS):
        update["messages"] = [AIMessage(verification, name="clarifier")]
    return update


# Why the clarifier's decision was not used, by the error that ended it (`clarifier_gave_up`).
GAVE_UP = {
    "UnreadableDecision": "its reply was not a readable decision, twice",
    "EmptyReplyError": "it returned an empty reply twice",
    "BudgetExceeded": "the cost budget cannot pay for questions",
}


async def _decide(
    context: Context, messages: Sequence[BaseMessage], ledger: spending.Ledger
) -> ClarifyDecision | None:
    """The model's decision, asked once more with its error if unreadable; else None, logged.

    Servers such as mlx_lm.server ignore `response_format`, so the JSON is only prompted.
    Proceeding without questions is safer than blocking the run on a reply we cannot read.
    """
    model = models.role_model(context, "clarifier")
    try:
        reply = await model.ask(messages, ledger=ledger)
        try:
            return read_decision(str(reply.content))
        except UnreadableDecision as problem:
            retry = HumanMessage(prompts.render("clarifier_retry", problem=str(problem)))
            retried = [*messages, AIMessage(str(reply.content)), retry]
            reply = await model.ask(retried, ledger=ledger)
            return read_decision(str(reply.content))
    except (UnreadableDecision, models.EmptyReplyError, spending.BudgetExceeded) as error:
        # Questions are optional: a budget that cannot pay for them leaves them out.
        log.warning("clarifier gave no usable decision (%s); proceeding without questions", error)
        progress.emit(
            "clarifier_gave_up",
            reason=GAVE_UP.get(type(error).__name__, "its reply could not be used"),
        )
        return None


def route_clarify(state: ResearchState) -> Literal["clarify", "ask_user", "orchestrate"]:
    if "pending_questions" in state and state["pending_questions"] is None:
        # Stopped mid-call, its call counted at its worst case: it asks again, fresh.
        return "clarify"
    return "ask_user" if state.get("pending_questions") else "orchestrate"


def read_answer(value: object) -> str | None:
    """The user's answer from a resume value, or None when its shape is not accepted."""
    if isinstance(value, dict) and set(value) == {"answer"}:
        value = value["answer"]
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def shown(value: object) -> str:
    """A rejected resume value in at most `SHOWN_CHARS`, whatever its depth, size or type."""
    try:
        text = _SHOWN.repr(value)
    except Exception:  # an object whose own __repr__ fails is still answered
        text = "(unprintable)"
    return limits.cut(text, SHOWN_CHARS)


def ask_user(state: ResearchState) -> dict[str, Any]:
    """Pause the run until the user answers; a malformed answer is asked for again."""
    questions = state.get("pending_questions") or []
    round_number = state.get("clarification_rounds", 0) + 1
    payload: dict[str, Any] = {"questions": questions, "round": round_number}
    answer = None
    for _ in range(MAX_BAD_ANSWERS):
        value = interrupt(payload)
        answer = read_answer(value)
        if answer is not None:
            break
        # Raising here would leave the bad value stored and the thread stuck.
        payload = {
            **payload,
            "error": f"Got {type(value).__name__} {shown(value)}. {ANSWER_SHAPES}",
        }
    if answer is not None:
        answer = limits.cut(answer, limits.USER_TEXT_CHARS)
    asked = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))
    process.hand_over(durable.top_scope(), "")  # the answer's clarify starts fresh
    return {
        "messages": [
            AIMessage(f"Before I start, a few questions:\n{asked}", name="clarifier"),
            HumanMessage(answer or "(no usable answer given; proceed with your best judgement)"),
        ],
        "clarification_rounds": round_number,
        "pending_questions": [],
    }
