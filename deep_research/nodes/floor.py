"""The orchestrator's floor: a run researches even when its model does not.

A small local model often answers the first planning call in plain text (its chat template
may drop the tools), with a call it cannot get right, or with nothing. Before any research
was done, such a reply is given research calls made in code: the plan's pending todos, else
the question's own parts, else the question itself, one researcher a topic. The calls then
go the way a model's would (plan review, shares of the caps, one task each), so nothing
else changes; a capable model, whose reply researches or plans, never meets the floor.
"""

from __future__ import annotations

import re
import uuid

from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

from deep_research import search as search_service
from deep_research.config.settings import Context
from deep_research.nodes import dispatch
from deep_research.nodes.planning import Research
from deep_research.runtime import progress
from deep_research.state import RESEARCH, ResearchState
from deep_research.text.topics import as_topic, distinct

MAX_FLOOR_TOPICS = 3  # a small model's run: each topic costs a researcher's calls
LEAD_CHARS = 150  # the words before a question's list, said with each of its items
# A question's parts: its list items.
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", re.MULTILINE)


def researched(state: ResearchState) -> bool:
    """Whether the thread has research results: a follow-up answered from them is no floor."""
    return any(
        isinstance(m, ToolMessage) and m.name == RESEARCH and m.status != "error"
        for m in state.get("messages", [])
    )


def may_act(state: ResearchState, context: Context) -> bool:
    """Whether a reply could still get the floor: no research yet, and a search left."""
    return searches_left(state, context) > 0 and not researched(state)


def searches_left(state: ResearchState, context: Context) -> int:
    return context.max_searches_per_run - state.get("searches_used", 0)


def applied(state: ResearchState, context: Context, reply: AIMessage, turns: int) -> AIMessage:
    """`reply` (the orchestrator's `turns`-th), or when it neither researches nor plans before
    any research was done, with the research the floor dispatches in code added: no more
    topics than searches left, so each researcher can search."""
    last_planning_turn = turns + 1 >= context.max_orchestrator_turns
    if not may_act(state, context) or not due(state, reply, last_planning_turn):
        return reply
    limit = min(context.max_research_calls_per_reply, searches_left(state, context))
    chosen = topics(state, reply, limit)
    if not chosen:
        return reply
    progress.emit("floor", id="", acted="dispatched", detail="; ".join(chosen))
    return research_reply(reply, chosen, context)


def due(state: ResearchState, reply: AIMessage, last_planning_turn: bool) -> bool:
    """Whether `reply` gets the floor: no research yet, and the reply neither researches nor
    plans (a plan alone on the last planning turn would leave the run unresearched)."""
    if researched(state) or dispatch.valid_research(reply, {}):
        return False
    return last_planning_turn or not _plans(state, reply)


def _plans(state: ResearchState, reply: AIMessage) -> list[str]:
    """The items of the reply's plan (its last valid `write_todos`) that are not done."""
    return [t["content"] for t in dispatch.plan_of(state, reply) if t["status"] != "completed"]


def topics(state: ResearchState, reply: AIMessage, limit: int) -> list[str]:
    """What the floor researches: the reply's plan, the state's pending todos, the question's
    parts, or the question; each a valid `research` topic, at most `limit`."""
    pending = [t["content"] for t in state.get("todos", []) if t["status"] != "completed"]
    question = _question(state)
    for candidates in (_plans(state, reply), pending, question_parts(question), [question]):
        if chosen := as_topics(candidates):
            return chosen[: min(limit, MAX_FLOOR_TOPICS)]
    return []


def _question(state: ResearchState) -> str:
    if question := state.get("question", ""):
        return question
    asked = [m.text for m in state.get("messages", []) if isinstance(m, HumanMessage)]
    return asked[-1] if asked else ""


def question_parts(question: str) -> list[str]:
    """The question's own parts when it lists them: each list item, after the words that
    lead into the list (a part alone, such as "Price", would lose what it is the price of).
    A question asking several things in sentences stays whole: its later sentences lean on
    the first ("How long do they last?")."""
    items = [item.strip() for item in _LIST_ITEM.findall(question)]
    if len(items) < 2:
        return []
    first = _LIST_ITEM.search(question)
    lead = " ".join(question[: first.start()].split()) if first else ""
    lead = lead[:LEAD_CHARS].rsplit(" ", 1)[0] if len(lead) > LEAD_CHARS else lead
    return [f"{lead} {item}".strip() for item in items]


def as_topics(texts: list[str]) -> list[str]:
    """`texts` as valid `research` topics (`as_topic`), each once (`distinct`), in order."""
    return distinct(topic for topic in map(as_topic, texts) if _valid(topic))


def _valid(topic: str) -> bool:
    try:
        Research(topic=topic)
    except ValueError:
        return False
    return True


def research_reply(reply: AIMessage, chosen: list[str], context: Context) -> AIMessage:
    """`reply` with one `research` call a topic added. Its text and its own calls stay: the
    unusable ones are answered with an error and an example, as always, so a model that
    can call tools learns from them while the research goes on. No model judged which of
    the topics are scholarly: each is, where the run offers scholarly sources."""
    marked = {"scholarly": True} if search_service.offers_scholarly(context) else {}
    calls = [
        ToolCall(
            name=RESEARCH, args={"topic": topic, **marked}, id=f"floor-{uuid.uuid4().hex[:12]}"
        )
        for topic in chosen
    ]
    return reply.model_copy(update={"tool_calls": [*reply.tool_calls, *calls]})
