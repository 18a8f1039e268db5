"""The reserve steps before the top-level model steps: each counts its step's worst case in
state (`cost_counted`, `call_reservation`) and ends, so the checkpoint holds it before the
step sends anything (llm/reservations.py). Without a budget they reserve nothing.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from deep_research.config.settings import Context, context_of
from deep_research.llm import models, reservations, spending
from deep_research.nodes import clarify, orchestrator, planning, report_writer
from deep_research.state import ResearchState


def _reserved(state: ResearchState, context: Context, worst: int, kept: int = 0) -> dict[str, Any]:
    """Reserve `worst` µUSD, at most what is left of the budget after `kept` (kept back)."""
    limit = spending.micros_of(context.max_cost_usd)
    reservation = reservations.reserve(
        None if limit is None else limit - kept, state.get("cost_counted", 0), worst
    )
    micros = reservation["micros"] if reservation is not None else 0
    return {"call_reservation": reservation, "cost_counted": micros}


def reserve_clarify(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The clarifier's decision and an empty reply's nudge, at their worst (a retry of an
    unreadable decision is sent only if it fits in what they leave)."""
    context = context_of(runtime)
    if context.max_cost_usd is None or not clarify.wants_questions(state, context):
        return _reserved(state, context, 0)
    model = models.role_model(context, "clarifier")
    worst = reservations.worst_case(model, clarify.clarifier_messages(state))
    return _reserved(state, context, worst)


def reserve_orchestrate(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The orchestrator's turn at its worst (its request and an empty reply's nudge).

    A planning call may not use what the report needs: it reserves from what is left after
    the report's reserve, so a call stopped mid-flight (counted as spent) still leaves the
    report its share. The report (at the turn cap, or once the budget stopped planning)
    may use everything that is left; `write_report` cuts its findings to fit."""
    context = context_of(runtime)
    if context.max_cost_usd is None:
        return _reserved(state, context, 0)
    model = models.role_model(context, "orchestrator")
    if orchestrator.writes_report(state, context):
        return _reserved(state, context, report_writer.report_worst(model))
    messages = planning.planning_messages(state, context)
    worst = reservations.worst_case(model, messages, orchestrator.TOOLS)
    return _reserved(state, context, worst, kept=report_writer.report_reserve(model))
