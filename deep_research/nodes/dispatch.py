"""Where an orchestrator reply goes: the research calls that really run, the plan it
holds for review, and the tasks and nodes its tool calls are sent to."""

from __future__ import annotations

import uuid
from typing import Literal

from langchain_core.messages import AIMessage
from langgraph.types import Send
from pydantic import ValidationError

from deep_research.config.settings import Context
from deep_research.nodes import churn
from deep_research.nodes.planning import Research, WriteTodos
from deep_research.state import RESEARCH, WRITE_TODOS, ResearchState, ResearchTask, Share, Todo
from deep_research.text import limits
from deep_research.text.topics import distinct


def dispatch_reply(state: ResearchState) -> list[Send | str] | Literal["finalize"]:
    """Where the orchestrator's reply goes: each valid research call becomes its own task,
    with the share `orchestrate` gave it; other tool calls go to `answer_tools`, and a reply
    without tool calls to `finalize`. (The edge out of `orchestrate` is
    `orchestrator.route_orchestrate`, which may first send the plan for review.)"""
    last = state["messages"][-1]
    if not isinstance(last, AIMessage) or not last.tool_calls:
        return "finalize"
    dispatch_id = str(uuid.uuid4())
    runnable = runnable_research(state, last)
    shares = state.get("shares") or {}
    targets: list[Send | str] = []
    for call in last.tool_calls:
        topic = runnable.get(call.get("id") or "")
        if topic is not None:
            task = ResearchTask(
                topic=topic,
                tool_call_id=call.get("id") or "",
                dispatch_id=dispatch_id,
                share=shares.get(call.get("id") or "", Share(searches=0)),
                scholarly=scholarly(call["args"]),
            )
            targets.append(Send("research", task))
        elif "answer_tools" not in targets:
            targets.append("answer_tools")
    return targets


def runnable_research(state: ResearchState, reply: AIMessage) -> dict[str, str]:
    """Call id -> topic for the research calls that will really run this turn."""
    return valid_research(reply, state.get("churn", churn.fresh())["refused"])


def valid_research(reply: AIMessage, refused: dict[str, str]) -> dict[str, str]:
    """Call id -> topic for the reply's well-formed research calls not in `refused`."""
    runnable = {}
    for call in reply.tool_calls:
        call_id = call.get("id") or ""
        if call["name"] != RESEARCH or call_id in refused:
            continue
        try:
            runnable[call_id] = Research.model_validate(call["args"]).topic
        except ValidationError:
            continue
    return runnable


def scholarly(args: object) -> bool:
    """Whether a research call marks its topic scholarly (`planning.ScholarlyResearch`):
    true, or what a small model writes for it; anything else is not, and never makes the
    call invalid. The researcher is offered the scholarly sources only where the run
    offers them (`search.offers_scholarly`)."""
    value = args.get("scholarly") if isinstance(args, dict) else None
    if isinstance(value, str) and len(value) <= len(" true "):
        value = value.strip().lower() == "true"
    return value is True


def plan_of(state: ResearchState, reply: AIMessage) -> list[Todo]:
    """The plan in an orchestrator reply, as shown: its runnable research topics, else its
    todos (the last valid call's), each item cut to `PLAN_ITEM_CHARS`."""
    topics = distinct(runnable_research(state, reply).values())
    if topics:
        return [Todo(content=_shown_item(topic), status="pending") for topic in topics]
    refused = state.get("churn", churn.fresh())["refused"]
    plan: list[Todo] = []
    for call in reply.tool_calls:
        if call["name"] != WRITE_TODOS or (call.get("id") or "") in refused:
            continue
        try:
            todos = WriteTodos.model_validate(call["args"]).todos
        except ValidationError:
            continue
        # Several valid calls in one reply are applied in order: the last one stands.
        plan = [Todo(content=_shown_item(t.content), status=t.status) for t in todos] or plan
    return plan


def _shown_item(text: str) -> str:
    # Model output: the user reads each item, so a 10 MB todo is shown cut, not whole.
    return limits.cut(text, limits.PLAN_ITEM_CHARS)


def plan_due(state: ResearchState, context: Context) -> bool:
    """Whether the last reply is a plan waiting for the user's review (`review_plan`)."""
    if not context.review_plan or state.get("plan_reviewed"):
        return False
    last = state["messages"][-1]
    return isinstance(last, AIMessage) and bool(last.tool_calls) and bool(plan_of(state, last))
