"""The first node of every input: a new question on a thread starts its own run.

The plan, orchestrator turns, clarification rounds, churn counters, research gaps and the
report start afresh; an over-long question is cut before any model reads it, and an input
that holds no question stops here, before any model call or search.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.runtime import Runtime

from deep_research import embedding
from deep_research.config.settings import Context, context_of
from deep_research.errors import DeepResearchError
from deep_research.nodes import churn
from deep_research.runtime import durable, http, process
from deep_research.state import ResearchState
from deep_research.text import limits

QUESTION_EXAMPLE = (
    '{"messages": [{"role": "user", "content": "Are heat pumps worth it in Norway?"}]}'
)


NOT_RUN = "Not run: a new question came before this call ran."


class EmptyQuestionError(DeepResearchError, ValueError):
    """The input's last message is not a user message with text: there is nothing to research."""


def new_question(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Each question on a thread gets its own plan, turns, clarification rounds, gaps and
    report (the previous one is cleared).

    The search budget and the sources stay: the cap is per thread, and earlier findings may
    still be cited. The relevance model starts loading now, in the background, so the first
    search finds it ready.
    """
    update: dict[str, Any] = {
        "todos": [],
        "orchestrator_turns": 0,
        "clarification_rounds": 0,
        "pending_questions": [],
        "plan_reviewed": False,
        "plan_edited": False,
        "plan_review_rounds": 0,
        "churn": churn.fresh(),
        "failures": None,
        "budget_note": "",
        # This question's report, when `finalize` writes it: a run that ends without one
        # must not hand back the previous answer (kept in the reports directory and log).
        "final_report": "",
    }
    messages = state.get("messages") or []
    # The input's own message is the last one: an input without a user message ({} or only
    # other roles) must not re-research the thread's previous question.
    question = messages[-1] if messages else None
    if not isinstance(question, HumanMessage) or not question.text.strip():
        # The thread stays usable: this input's blank message is removed by the next question.
        raise EmptyQuestionError(
            "The input holds no question: its last message must be a user message with text, "
            f"e.g. {QUESTION_EXAMPLE}. Nothing was researched."
        )
    http.prepare_tls()  # the CA bundle read on a thread while the first steps run
    context = context_of(runtime)
    if context.max_searches_per_run > 0 and (context.relevance_filter or context.use_memory):
        # Fetched if missing only when results are to be scored; memory alone uses the
        # model only where it is already on this machine.
        # Loaded once the first model request is out, while it waits (runtime/process.py).
        embedding.warm_up(
            download=context.relevance_filter, after=process.after_first_model_request
        )
    # Blank user messages left by inputs refused above never reach a model.
    changes: list[HumanMessage | RemoveMessage | ToolMessage] = [
        RemoveMessage(id=m.id) for m in messages if _blank(m) and m.id is not None
    ]
    text = limits.cut(question.text, limits.USER_TEXT_CHARS)
    if unanswered := _unanswered(messages[:-1]):
        # A reply stopped before its calls were answered (paused for plan review, or
        # research that never finished): each call gets its one answer, before the question,
        # which moves after them under a new id (an id kept would keep its place).
        changes.append(RemoveMessage(id=question.id or ""))
        changes += [
            ToolMessage(NOT_RUN, tool_call_id=call_id, name=name, status="error")
            for call_id, name in unanswered
        ]
        changes.append(HumanMessage(text, id=str(uuid.uuid4())))
    elif len(question.text) > limits.USER_TEXT_CHARS:
        # Same id: the stored question is replaced, so no later request carries it whole.
        changes.append(HumanMessage(text, id=question.id))
    if changes:
        update["messages"] = changes
    process.hand_over(durable.top_scope(), "")  # the question's first model step starts fresh
    return update


def _blank(message: object) -> bool:
    return isinstance(message, HumanMessage) and not message.text.strip()


def _unanswered(messages: list[AnyMessage]) -> list[tuple[str, str]]:
    """(id, name) of every tool call in `messages` that no tool message answers."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return [
        (call.get("id") or "", call["name"])
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if (call.get("id") or "") not in answered
    ]
