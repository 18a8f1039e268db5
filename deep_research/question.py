"""The first node of every input: a new question on a thread starts its own run.

The plan, orchestrator turns, clarification rounds, churn counters and research gaps start
afresh; an over-long question is cut before any model reads it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from deep_research import churn, limits
from deep_research.state import ResearchState


def new_question(state: ResearchState) -> dict[str, Any]:
    """Each question on a thread gets its own plan, turns, clarification rounds and gaps.

    The search budget and the sources stay: the cap is per thread, and earlier findings may
    still be cited.
    """
    update: dict[str, Any] = {
        "todos": [],
        "orchestrator_turns": 0,
        "clarification_rounds": 0,
        "pending_questions": [],
        "churn": churn.fresh(),
        "failures": None,
    }
    question = next((m for m in reversed(state["messages"]) if isinstance(m, HumanMessage)), None)
    if question is not None and len(question.text) > limits.USER_TEXT_CHARS:
        # Same id: the stored question is replaced, so no later request carries it whole.
        text = limits.cut(question.text, limits.USER_TEXT_CHARS)
        update["messages"] = [HumanMessage(text, id=question.id)]
    return update
