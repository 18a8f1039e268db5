"""Plan review (`review_plan`): the orchestrator's first plan waits for the user's approval.

`orchestrate` makes the plan; `review_plan`, a node of its own, only interrupts. A node
re-runs from its first line on resume, so the model call that made the plan must not be
in the interrupting node: answering never pays for the plan again, nor changes it.

The plan is what the paused reply would do: its research topics (pending) when it calls
research, else the todos of its valid `write_todos` call. A reply with neither (a report,
or only mistakes) is not a plan and is not reviewed; the next one that is, is. The paused
reply keeps its tool calls and shares, counted only when it runs: "ok" dispatches it as if it
had never paused, and a changed plan (or a new question) answers each of its calls once with
"not run", its shares never counted. A plan the user replaced is dispatched in code at the next
turn, a researcher an item, with no model call (`orchestrator`): a small model told to follow
it may not.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt

from deep_research.config.settings import Context, context_of
from deep_research.errors import DeepResearchError
from deep_research.nodes import churn, dispatch, floor
from deep_research.nodes.clarify import MAX_BAD_ANSWERS, shown
from deep_research.runtime import durable, process, progress, prompts
from deep_research.state import ResearchState, Todo, handed_out
from deep_research.text import limits
from deep_research.text.topics import distinct

log = logging.getLogger(__name__)

REVIEW_SHAPES = (
    'Resume with "ok", a list of strings (the new plan), or {"feedback": "<what to change>"}.'
)


@dataclass(frozen=True)
class Review:
    """What the user decided: go, this plan instead, or revise with this feedback."""

    kind: Literal["ok", "replace", "feedback"]
    items: tuple[str, ...] = ()
    feedback: str = ""


class BadReview(DeepResearchError, ValueError):
    """A resume value that is none of the accepted shapes; the message says why."""


def route_review(state: ResearchState) -> list[Send | str] | str:
    """An approved reply is dispatched as it stands; a changed plan goes back to planning."""
    if isinstance(state["messages"][-1], AIMessage):
        return dispatch.dispatch_reply(state)
    return "orchestrate"


def read_review(value: object, max_items: int = limits.MAX_PLAN_ITEMS) -> Review:
    """The user's decision from a resume value; `BadReview` says what is wrong with it.

    A list may be as long as `max_items`: the shown plan's length when that is longer,
    so a model's long plan can be sent back with one item edited."""
    if isinstance(value, str) and value.strip().lower() == "ok":
        return Review("ok")
    if isinstance(value, dict) and set(value) == {"feedback"}:
        text = value["feedback"]
        if isinstance(text, str) and text.strip():
            return Review("feedback", feedback=limits.cut(text.strip(), limits.USER_TEXT_CHARS))
        raise BadReview("feedback must be a non-empty string.")
    if isinstance(value, list):
        # Checked before anything walks the list: a million items cost nothing.
        if len(value) > max_items:
            raise BadReview(f"a plan has at most {max_items} items, got {len(value)}.")
        for number, item in enumerate(value, start=1):
            if not isinstance(item, str):
                raise BadReview(f"item {number} is {type(item).__name__}, not a string.")
        cut = (limits.cut(i.strip(), limits.PLAN_ITEM_CHARS) for i in value if i.strip())
        items = tuple(distinct(cut))  # an item written twice is researched once
        if not items:
            raise BadReview("the plan is empty.")
        return Review("replace", items=items)
    raise BadReview(f"Got {type(value).__name__} {shown(value)}.")


def review_plan(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pause with the plan until the user approves, replaces or sends it back with feedback."""
    context = context_of(runtime)
    reply = state["messages"][-1]
    assert isinstance(reply, AIMessage)
    round_number, cap = state.get("plan_review_rounds", 0) + 1, context.max_plan_reviews
    payload: dict[str, Any] = {"plan": dispatch.plan_of(state, reply), "round": round_number}
    review = None
    longest = max(limits.MAX_PLAN_ITEMS, len(payload["plan"]))
    for _ in range(MAX_BAD_ANSWERS):
        value = interrupt(payload)
        try:
            review = read_review(value, longest)
            break
        except BadReview as problem:
            # Raising here would leave the bad value stored and the thread stuck.
            payload = {**payload, "error": f"{problem} {REVIEW_SHAPES}"}
    process.hand_over(durable.top_scope(), "")  # answered: the next model step starts fresh
    # `orchestrate` left the held reply's shares uncounted: they count once it runs.
    approved = {
        "plan_reviewed": True,
        "plan_review_rounds": round_number,
        **handed_out(state.get("shares") or {}),
    }
    if review is None:
        log.warning("no usable plan review after %d answers; the plan runs", MAX_BAD_ANSWERS)
        progress.emit("plan_review", outcome="unanswered", round=round_number, max_rounds=cap)
        return approved
    if review.kind == "ok":
        progress.emit("plan_review", outcome="approved", round=round_number, max_rounds=cap)
        return approved
    update: dict[str, Any] = {
        "messages": _not_run(reply),
        "plan_review_rounds": round_number,
        # Nothing of the paused reply runs (its shares were never counted), and a plan the
        # user sent back does not count as churn (the guard would soon refuse the revision).
        "shares": {},
        "churn": churn.fresh(),
    }
    if review.kind == "replace":
        todos = [Todo(content=item, status="pending") for item in review.items]
        listing = "\n".join(f"- [pending] {item}" for item in review.items)
        update["messages"].append(HumanMessage(prompts.render("plan_replaced", plan=listing)))
        progress.emit("plan_review", outcome="replaced", round=round_number, max_rounds=cap)
        progress.emit("todos", todos=todos)
        return {**update, "todos": todos, "plan_reviewed": True, "plan_edited": True}
    last = round_number >= cap
    note = (
        f" This was the last review ({round_number} of {cap}): "
        "the revised plan runs without asking the user again."
        if last
        else ""
    )
    changes = prompts.render("plan_changes", feedback=review.feedback, last_round=note)
    update["messages"].append(HumanMessage(changes))
    progress.emit(
        "plan_review",
        outcome="feedback",
        round=round_number,
        max_rounds=cap,
    )
    return {**update, "plan_reviewed": last}


def edited_plan(state: ResearchState, context: Context) -> list[str]:
    """The items of a plan the user replaced that run at the next turn: as many as a reply
    may research and searches are left (the rest stay pending todos); [] for any other turn."""
    if not state.get("plan_edited") or state.get("budget_note"):  # the budget ended planning
        return []
    pending = [t["content"] for t in state.get("todos", []) if t["status"] != "completed"]
    limit = min(context.max_research_calls_per_reply, floor.searches_left(state, context))
    return floor.as_topics(pending)[: max(limit, 0)]


def _not_run(reply: AIMessage) -> list[ToolMessage | HumanMessage]:
    """One answer per tool call of the paused reply: none of them ran."""
    text = prompts.render("plan_not_run").strip()
    return [
        ToolMessage(text, tool_call_id=call.get("id") or "", name=call["name"], status="error")
        for call in reply.tool_calls
    ]
