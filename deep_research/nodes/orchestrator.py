"""The orchestrator: plans with todos, fans research out as parallel tasks, writes the report;
and its router, `route_orchestrate`. Its other tool calls are answered in `tool_answers`."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Send

from deep_research import search
from deep_research.config import mcp_servers
from deep_research.config.settings import Context, context_of
from deep_research.llm import models, spending
from deep_research.llm.prices import price_of
from deep_research.nodes import (
    churn,
    dispatch,
    floor,
    plan_review,
    planning,
    report_form,
    report_sections,
    report_writer,
)
from deep_research.nodes.todo_list import ticked
from deep_research.runtime import durable, process, progress
from deep_research.state import (
    WRITE_TODOS,
    ChurnGuard,
    ResearchState,
    Share,
    handed_out,
)
from deep_research.text import fences, limits


def writes_report(state: ResearchState, context: Context) -> bool:
    """Whether the next turn writes the report without tools: the turn cap is reached, or
    the cost budget stopped planning (`budget_note`)."""
    last_turn = state.get("orchestrator_turns", 0) + 1 >= context.max_orchestrator_turns
    return last_turn or bool(state.get("budget_note"))


async def orchestrate(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Plan, delegate research, or write the report; at the turn cap, write it without tools.

    With `max_cost_usd`, a planning call that would pass the budget is not sent: the turn
    notes why and runs again to write the report from what the run has. A turn that runs
    again after a stop, whose call has no saved answer, counts that call at its worst case
    and runs again (`models.CallLost`)."""
    context = context_of(runtime)
    budget = spending.micros_of(context.max_cost_usd)
    here = durable.top_scope()
    counted = state.get("cost_counted", 0)
    ledger = spending.Ledger(budget, counted, fresh=process.take_over(here, ""))
    model = models.role_model(context, "orchestrator")  # planning: the role's usual limit
    writer = models.role_model(context, "orchestrator", report=True)  # sized to the length
    # The user's edited plan takes the place of the reviewed reply, in its turn.
    edited = plan_review.edited_plan(state, context)
    turns = state.get("orchestrator_turns", 0) + (0 if edited else 1)
    wishes = report_form.wishes(state, context)
    reserve = report_writer.report_reserve(writer, wishes) if budget is not None else 0
    update: dict[str, Any] = {"plan_edited": False} if state.get("plan_edited") else {}
    if done := ticked(state):  # the research that came back ticks its items off
        update |= done
        state = {**state, "todos": done["todos"]}  # and the model plans from the ticked list
    if state.get("budget_note") and _affordable(state, context, model, ledger, reserve):
        update["budget_note"] = ""  # a bigger budget on resume: planning goes on
        state = {**state, "budget_note": ""}
    if not edited:  # the edited plan's dispatch is the reviewed turn's, already announced
        progress.emit("orchestrator_turn", turn=turns, cap=context.max_orchestrator_turns)
    last_turn = not edited and writes_report(state, context)
    # Sections when the plan is all researched, or at the turn cap (`report_in_sections`).
    if not edited and (found := report_sections.due(state, context, report_turn=last_turn)):
        return {**update, **await _sections_turn(state, context, writer, ledger, turns, found)}
    if last_turn:
        return {**update, **await _report_turn(state, writer, ledger, turns, wishes)}
    # Planning may not use what the report needs: it is held to what is left after it.
    planning_ledger = spending.Ledger(
        None if budget is None else budget - reserve, counted, fresh=ledger.fresh
    )
    if edited:
        # Researched as an approved plan is: dispatched in code, a researcher an item, with
        # no model call (a small model told to follow it may not).
        reply = floor.research_reply(AIMessage(""), edited, context)
        process.hand_over(here, "")  # no call was sent: the next turn starts fresh
    else:
        asked = await _ask(state, context, model, planning_ledger, here)
        if not isinstance(asked, AIMessage):
            return {**update, **asked}
        reply = floor.applied(state, context, asked, turns)
    ledger = planning_ledger
    guard = churn.after_reply(state.get("churn"), reply.tool_calls, context)
    guard = _limit_research(guard, reply, context.max_research_calls_per_reply)
    runnable = dispatch.valid_research(reply, guard["refused"])
    # What is left of the whole budget after the report's reserve.
    money = None if budget is None else max(0, budget - reserve - ledger.counted)
    shares = await _shares(runnable, state, context, money)
    # A reply held for plan review sends nothing until it is approved: `review_plan`
    # counts its shares then, so a new question asked instead still has them.
    held = context.review_plan and not state.get("plan_reviewed")
    handed = handed_out({} if held else shares)
    spent = ledger.update()
    return {
        **update,
        "messages": [reply],
        "orchestrator_turns": turns,
        "churn": guard,
        "shares": shares,
        "searches_used": handed["searches_used"],
        "mcp_calls_used": handed["mcp_calls_used"],
        "usage": spent["usage"],
        "cost_counted": spent["cost_counted"] + handed["cost_counted"],
    }


async def _shares(
    runnable: dict[str, str], state: ResearchState, context: Context, money: int | None
) -> dict[str, Share]:
    """What is left (cap minus what state counts), split into one share per research call
    and counted now, in this node's checkpoint: sibling tasks cannot see each other's
    searches, and a task dropped before it reports (a new question after a stopped run)
    must not free searches it may have sent. Each task gives back what it did not use when
    it ends. The cost budget (`money`, what is left after keeping back what the report
    could cost, so a run that spends its budget can still write it) is split the same way."""
    left = context.max_searches_per_run - state.get("searches_used", 0)
    searches = search.split(left, len(runnable))
    shares = {call: Share(searches=n) for call, n in zip(runnable, searches, strict=True)}
    servers = await mcp_servers.in_run() if context.max_mcp_calls_per_run else ()
    _share_mcp_calls(shares, state, context, bool(servers))
    if money is not None:
        for share, cost in zip(shares.values(), search.split(money, len(runnable)), strict=True):
            share["cost"] = cost
    return shares


def _share_mcp_calls(
    shares: dict[str, Share], state: ResearchState, context: Context, servers: bool
) -> None:
    """Calls of MCP tools, split into the shares the way searches are, when the operator
    configured servers (none otherwise: a task that fails keeps no share of them counted)."""
    left = context.max_mcp_calls_per_run - state.get("mcp_calls_used", 0)
    split = search.split(left if servers else 0, len(shares))
    for share, calls in zip(shares.values(), split, strict=True):
        share["mcp"] = calls


async def _ask(
    state: ResearchState,
    context: Context,
    model: models.RoleModel,
    ledger: spending.Ledger,
    here: tuple[str, str],
) -> AIMessage | dict[str, Any]:
    """The model's planning reply, or the update of a turn that has none (stopped mid-call,
    or by the cost budget)."""
    try:
        reply = await model.ask(
            planning.planning_messages(state, context), planning.tools(context), ledger
        )
    except models.CallLost:
        process.hand_over(here, "")  # the turn's next start is fresh
        return ledger.update()
    except spending.BudgetExceeded as stop:
        note = f"The run stopped at its cost budget: {stop} This report is written from the "
        note += "research done until then."
        progress.emit("budget_reached", note=note)
        process.hand_over(here, "")  # the report is written next, from a fresh start
        return {"budget_note": note, **ledger.update()}
    except models.EmptyReplyError:
        # Nothing said twice: the floor researches, or the report quotes what was read; with
        # neither, the run stops with the error. What the calls used is in the ledger.
        if not (floor.may_act(state, context) or state.get("sources")):
            raise
        reply = AIMessage("")
    process.hand_over(here, "")
    return reply


def route_orchestrate(state: ResearchState, runtime: Runtime[Context]) -> list[Send | str] | str:
    """`dispatch.dispatch_reply`, except that a plan waiting for review goes to `review_plan`,
    and a turn that left no reply (stopped mid-call, or stopped by the budget) runs again."""
    if not isinstance(state["messages"][-1], AIMessage):
        return "orchestrate"
    if dispatch.plan_due(state, context_of(runtime)):
        return "review_plan"
    return dispatch.dispatch_reply(state)


def _affordable(
    state: ResearchState,
    context: Context,
    model: models.RoleModel,
    ledger: spending.Ledger,
    reserve: int,
) -> bool:
    """Whether a planning call fits the budget now, beside the report's reserve: a run the
    budget stopped, resumed with a bigger one, plans again. (The request's own admission,
    as `spending.Ledger.admit` makes it.)"""
    if ledger.limit is None:
        return True
    prompt = spending.prompt_bound(
        planning.planning_messages(state, context), planning.tools(context)
    )
    price = model.price or price_of(model.spec)
    try:
        spending.Ledger(ledger.limit - reserve, ledger.counted).admit(
            price, prompt, model.max_tokens
        )
    except spending.BudgetExceeded:
        return False
    return True


async def _sections_turn(
    state: ResearchState,
    context: Context,
    model: models.RoleModel,
    ledger: spending.Ledger,
    turns: int,
    found: list[report_sections.Part],
) -> dict[str, Any]:
    """The turn that writes the report as sections in parallel (`report_sections`); a
    section or frame the model left empty twice has the single call write it instead."""
    here = durable.top_scope()
    try:
        reply = await report_sections.write(state, context, model, ledger, found)
    except models.EmptyReplyError:
        wishes = report_form.wishes(state, context)
        return await _report_turn(state, model, ledger, turns, wishes)
    except models.CallLost:
        process.hand_over(here, "")
        return ledger.update()
    process.hand_over(here, "")
    return {"messages": [reply], "orchestrator_turns": turns, **ledger.update()}


async def _report_turn(
    state: ResearchState, model: models.RoleModel, ledger: spending.Ledger, turns: int, wishes: str
) -> dict[str, Any]:
    """The turn that writes the report. Not even the report fitting what is left stops the
    run (`BudgetExceeded`), once what the turn was billed before the refusal is counted."""
    here = durable.top_scope()
    try:
        reply = await report_writer.write_report(
            model, lambda c: _findings(state, c), ledger, wishes
        )
    except models.CallLost:
        process.hand_over(here, "")  # the turn's next start is fresh
        return ledger.update()
    except spending.BudgetExceeded:
        process.hand_over(here, "")  # refused before sending: nothing is in flight
        if ledger.spent:  # an earlier request of this turn was billed: count it first
            return ledger.update()
        raise
    process.hand_over(here, "")
    return {"messages": [reply], "orchestrator_turns": turns, **ledger.update()}


def _findings(state: ResearchState, chars: int = limits.FINDINGS_CHARS) -> str:
    """The question and every research result as one plain message, of bounded size.

    A user-role message may carry web text only fenced: each research result (which quotes
    titles, URLs and pages) is fenced whole, its own fences lifted first. Each part is cut
    to a fair share, so every result keeps its start (and its links) rather than the last
    ones being dropped.
    """
    parts: list[tuple[str, str, bool]] = []  # label, text, whether the text is web data
    for message in state["messages"]:
        if isinstance(message, HumanMessage):
            parts.append(("User: ", str(message.text), False))
        elif isinstance(message, ToolMessage) and message.name != WRITE_TODOS:
            parts.append(("Research result:\n", fences.unfence(message.text), True))
    fixed = sum(len(label) + fences.FENCE_CHARS * fenced for label, _, fenced in parts)
    budget = chars - fixed - 2 * max(0, len(parts) - 1)
    texts = limits.fair_cut([text for _, text, _ in parts], budget)
    nonce = fences.new_nonce()
    return "\n\n".join(
        label + (fences.fence(text, nonce) if fenced else text)
        for (label, _, fenced), text in zip(parts, texts, strict=True)
    )


def _limit_research(guard: ChurnGuard, reply: AIMessage, limit: int) -> ChurnGuard:
    """The guard with every runnable research call after the first `limit` refused.

    Decided when the reply arrives and kept in state, like the churn verdicts: a resume
    with another limit cannot then run a call that `answer_tools` already refused.
    """
    extra = list(dispatch.valid_research(reply, guard["refused"]))[limit:]
    if not extra:
        return guard
    return {**guard, "refused": {**guard["refused"], **dict.fromkeys(extra, "over_limit")}}
