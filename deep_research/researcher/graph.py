"""The research subgraph: the researcher reserves its turn's cost and thinks, reserves
searches, searches, and reports.

The task that runs it for one `research` call is `researcher/task.py`."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langgraph.config import get_config
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deep_research import search as search_service
from deep_research.config.settings import Context, context_of
from deep_research.llm import models, reservations, spending
from deep_research.llm.prices import MICROS
from deep_research.llm.toolcalls import invalid_arguments
from deep_research.runtime import prompts
from deep_research.state import NO_USAGE, ResearcherState, RoleUsage, Source, Usage

MAX_QUERIES_PER_CALL = 4


class WebSearch(BaseModel):
    """Search the web; each query is one search."""

    model_config = ConfigDict(title="web_search")
    queries: list[str] = Field(min_length=1, description=f"1-{MAX_QUERIES_PER_CALL} queries")


WEB_SEARCH_EXAMPLE = 'web_search({"queries": ["EU battery recycling capacity 2025"]})'


def _turn(state: ResearcherState, context: Context) -> tuple[list[Any], list[type[BaseModel]]]:
    """What the researcher's next turn sends: its messages and tools (none at the turn cap)."""
    system = SystemMessage(
        # The same text for every researcher and turn, so a server's prefix cache keeps it;
        # the topic's own search budget is told after each search instead.
        prompts.render("researcher", researcher=_who(context))
    )
    if state.get("turns", 0) + 1 >= context.max_researcher_turns:
        wrap_up = HumanMessage(prompts.render("researcher_wrap_up"))
        return [system, *_as_plain_text(state["messages"]), wrap_up], []
    return [system, *state["messages"]], [WebSearch]


def _cost_quota(state: ResearcherState, context: Context) -> int | None:
    return state.get("cost_quota") if context.max_cost_usd is not None else None


def reserve_think(state: ResearcherState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Count the next turn's worst case in the task's `cost`, before the turn sends it."""
    context = context_of(runtime)
    limit, counted = _cost_quota(state, context), state.get("cost", 0)
    if limit is None:
        return {"call_reservation": None}
    messages, tools = _turn(state, context)
    worst = reservations.worst_case(models.role_model(context, "researcher"), messages, tools)
    reservation = reservations.reserve(limit, counted, worst)
    assert reservation is not None
    return {"call_reservation": reservation, "cost": counted + reservation["micros"]}


async def think(state: ResearcherState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The researcher's turn: search more, or write the cited report.

    With a cost budget, each call is held to what `reserve_think` counted for it, within
    the task's share (`cost_quota`); a call that does not fit is not sent and the
    researcher ends with what it found (`_out_of_budget`)."""
    context = context_of(runtime)
    reservation = state.get("call_reservation")
    counted = state.get("cost", 0)
    step = reservations.open_step(_cost_quota(state, context), counted, reservation)
    if step is None:  # this turn ran before and died: its reservation stays counted
        return {"call_reservation": reservations.declined(reservation)}
    await reservations.saved(reservation)  # stored before the call goes out
    model = models.role_model(context, "researcher")
    messages, tools = _turn(state, context)
    try:
        reply = await model.ask(messages, tools, step.ledger)
    except spending.BudgetExceeded:
        reply = _out_of_budget(state.get("sources", []))
    return {
        "messages": [reply],
        "turns": state.get("turns", 0) + 1,
        "usage": step.ledger.usage,
        "cost": step.cost_after(counted),
        "call_reservation": None,
    }


def _out_of_budget(sources: list[Source]) -> AIMessage:
    """The researcher's report when its share of the budget is spent: the pages it found."""
    found = "\n".join(f"- [{s['title'] or s['url']}]({s['url']})" for s in sources[:20])
    return AIMessage(
        "The cost budget ran out before this researcher wrote its report. "
        + (f"The pages it retrieved:\n{found}" if found else "It had retrieved no pages.")
    )


def _who(context: Context) -> str:
    """Who the researcher is told it is: `web_search` reaches only the user's documents
    when the search provider is `library`, and a prompt saying "web" would send it after
    pages it cannot get."""
    if context.search_provider == "library":
        return (
            "a researcher of the user's own documents (their library: `web_search` searches "
            "only those documents, not the web)"
        )
    return "a web researcher"


def _as_plain_text(messages: list[Any]) -> list[Any]:
    """History without tool-call structure, for a call that offers no tools."""
    plain: list[Any] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            plain.append(HumanMessage(f"Search results:\n{message.content}"))
        elif isinstance(message, AIMessage) and message.tool_calls:
            asked = "; ".join(str(call["args"]) for call in message.tool_calls)
            plain.append(AIMessage(f"{message.content}\n(I searched: {asked})".strip()))
        else:
            plain.append(message)
    return plain


def route_researcher(state: ResearcherState) -> Literal["reserve_think", "reserve", "__end__"]:
    if reservations.pending(state.get("call_reservation")):  # it did not run: reserve again
        return "reserve_think"
    last = state["messages"][-1]
    return "reserve" if isinstance(last, AIMessage) and last.tool_calls else "__end__"


def reserve(state: ResearcherState) -> dict[str, Any]:
    """Count the searches the next step may send, in state, before it sends any."""
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    wanted = sum(len(_queries(call)) for call in last.tool_calls)
    reservation = search_service.reserve(wanted, state["quota"], state["searches"])
    return {"reservation": reservation, "searches": state["searches"] + reservation["granted"]}


def _queries(call: ToolCall) -> list[str]:
    """The queries a `web_search` call will run (none for a malformed or unknown call)."""
    if call["name"] != "web_search":
        return []
    try:
        return WebSearch.model_validate(call["args"]).queries[:MAX_QUERIES_PER_CALL]
    except ValidationError:
        return []


async def search(state: ResearcherState, runtime: Runtime[Context]) -> Command[Any]:
    """Run the researcher's queries in parallel: cached, within its reservation, pages read."""
    reservation = state.get("reservation")
    if not search_service.may_send(reservation):
        # This step already ran under this reservation and did not finish (a crash, Ctrl-C):
        # its searches may have been sent, so they stay counted; reserve again to retry.
        return Command(goto="reserve")
    assert reservation is not None
    context = context_of(runtime)
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    grant = search_service.Grant(
        reservation["granted"],
        quota=state["quota"],
        counted_before=state["searches"] - reservation["granted"],
        cap=context.max_searches_per_run,
    )
    # The cache spans the whole run (thread): every researcher, every orchestrator turn.
    thread_id = get_config().get("configurable", {}).get("thread_id")
    share = context.max_chars_per_turn // max(1, len(last.tool_calls))
    shown = _shown(state["messages"], "pages_shown"), _shown(state["messages"], "listed")
    async with search_service.session(
        context,
        run_key=str(thread_id or state["dispatch_id"]),
        owner=state["tool_call_id"],
        topic=state["topic"],
        grant=grant,
    ) as searching:
        answers = await asyncio.gather(
            *(_answer_call(call, searching, share, shown) for call in last.tool_calls)
        )
    messages = [message for message, _ in answers]
    searches = state["searches"] - grant.unused  # what was not sent goes back
    ran = [i for i, message in enumerate(messages) if message.status != "error"]
    if ran:  # the budget is told where results are, not in an error's one-line example
        left = max(0, state["quota"] - searches)
        last_ran = messages[ran[-1]]
        messages[ran[-1]] = last_ran.model_copy(
            update={"content": f"{last_ran.content}\n\n({left} searches left on this topic.)"}
        )
    update = {
        "messages": messages,
        "sources": [source for _, sources in answers for source in sources],
        "searches": searches,
        "reservation": None,
        "usage": search_usage(grant),
    }
    return Command(goto="reserve_think", update=update)


def search_usage(grant: search_service.Grant) -> Usage:
    """The step's searches as usage: role "search" holds their count and cost; the run's
    `calls` and tokens stay the model's, its `usd` is everything. Not held to the cost
    budget: `max_searches_per_run` bounds searches before any is sent."""
    used = RoleUsage(
        calls=grant.sent, tokens_in=0, tokens_out=0, usd=grant.cost / MICROS, estimated=0
    )
    if not grant.sent:
        return NO_USAGE
    return Usage(**{**NO_USAGE, "usd": used["usd"], "by_role": {"search": used}})


def _shown(messages: list[Any], key: str) -> frozenset[str]:
    """URLs whose page text (`pages_shown`), or any entry (`listed`), an earlier search
    result already gave this researcher."""
    return frozenset(
        url
        for message in messages
        if isinstance(message, ToolMessage) and isinstance(message.artifact, dict)
        for url in message.artifact.get(key, [])
    )


async def _answer_call(
    call: ToolCall,
    searching: search_service.SearchSession,
    max_chars: int,
    shown: tuple[frozenset[str], frozenset[str]],
) -> tuple[ToolMessage, list[Source]]:
    """One tool call's message and the sources its queries retrieved."""
    call_id = call.get("id") or ""
    if call["name"] != "web_search":
        name = call["name"]
        text = f"Unknown tool {name!r}: the only tool is web_search. Example: {WEB_SEARCH_EXAMPLE}"
        return ToolMessage(text, tool_call_id=call_id, status="error"), []
    try:
        queries = WebSearch.model_validate(call["args"]).queries
    except ValidationError as error:
        text = f"{invalid_arguments(call['args'], error)} Example: {WEB_SEARCH_EXAMPLE}"
        return ToolMessage(text, tool_call_id=call_id, status="error"), []
    answer = await searching.answer(queries[:MAX_QUERIES_PER_CALL], max_chars, *shown)
    text = answer.text
    if len(queries) > MAX_QUERIES_PER_CALL:
        text += f"\n\nOnly the first {MAX_QUERIES_PER_CALL} queries were run."
    # The artifact is not shown to the model; it keeps fallbacks and skipped pages in the trace.
    return ToolMessage(text, tool_call_id=call_id, artifact=answer.trace), answer.sources


researcher_builder = StateGraph(ResearcherState, context_schema=Context)
researcher_builder.add_node(reserve_think)
researcher_builder.add_node(think)
researcher_builder.add_node(reserve)
researcher_builder.add_node(search, destinations=("reserve_think", "reserve"))
researcher_builder.add_edge(START, "reserve_think")
researcher_builder.add_edge("reserve_think", "think")
researcher_builder.add_conditional_edges("think", route_researcher)
researcher_builder.add_edge("reserve", "search")
researcher_graph = researcher_builder.compile(name="researcher")
