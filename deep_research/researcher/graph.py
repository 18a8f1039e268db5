"""The research subgraph: the researcher thinks, searches, and reports.

Each model call and search in it is a durable call (runtime/durable.py): a researcher
stopped mid-way and resumed sends again only what was in flight. What its calls may spend
is counted where they are made: the model client (llm/models.py) and the search step
(search/budget.py). The task that runs it for one `research` call is `researcher/task.py`."""

from __future__ import annotations

import uuid
from typing import Any, Final, Literal

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deep_research import search as search_service
from deep_research.config.settings import Context, context_of
from deep_research.llm import models, spending
from deep_research.llm.prices import MICROS
from deep_research.llm.toolcalls import invalid_arguments
from deep_research.researcher import floor
from deep_research.researcher.sources import chosen_source, chosen_years, search_tool
from deep_research.runtime import durable, process, progress, prompts
from deep_research.search import mcp_tools
from deep_research.state import NO_USAGE, ResearcherState, RoleUsage, Source, Usage

MAX_QUERIES_PER_CALL = 4
WEB_SEARCH: Final = "web_search"  # the researcher's one tool


class WebSearch(BaseModel):
    """Search the web; each query is one search."""

    model_config = ConfigDict(title=WEB_SEARCH)
    queries: list[str] = Field(min_length=1, description=f"1-{MAX_QUERIES_PER_CALL} queries")


WEB_SEARCH_EXAMPLE = WEB_SEARCH + '({"queries": ["EU battery recycling capacity 2025"]})'


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
    web = search_tool(context, WebSearch, scholarly=state.get("scholarly", False))
    tools = [web, *mcp_tools.tool_models(state)]
    return [system, *state["messages"]], tools


def _cost_share(state: ResearcherState, context: Context) -> int | None:
    return state["share"].get("cost") if context.max_cost_usd is not None else None


def scope(state: ResearcherState) -> tuple[str, str]:
    """Where this researcher's steps hand over to each other (runtime/process.py)."""
    return durable.thread_id(state["dispatch_id"]), state["tool_call_id"]


def last_id(state: ResearcherState) -> str:
    return state["messages"][-1].id or ""


async def think(state: ResearcherState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The researcher's turn: search more, or write the cited report.

    With a cost budget, the call is held to the task's share (`Share.cost`); a call that does
    not fit is not sent and the researcher ends with what it found (`_out_of_budget`). A turn
    that runs again after a stop, whose call has no saved answer, counts that call at its
    worst case and runs again (`models.CallLost`)."""
    context = context_of(runtime)
    here = scope(state)
    fresh = process.take_over(here, last_id(state))
    counted = state.get("cost", 0)
    ledger = spending.Ledger(_cost_share(state, context), counted, fresh=fresh)
    model = models.role_model(context, "researcher")
    listed = await mcp_tools.listing(state)  # the MCP servers' tools, at the first turn
    messages, tools = _turn({**state, **listed}, context)  # type: ignore[typeddict-item]
    try:
        reply = await model.ask(messages, tools, ledger)
    except models.CallLost:
        process.hand_over(here, last_id(state))  # the turn's next start is fresh
        return {"usage": ledger.usage, "cost": counted + ledger.spent, **listed}
    except spending.BudgetExceeded:
        reply = _out_of_budget(state.get("sources", []))
        tools = []  # out of budget: no search either, the floor's included
    except models.EmptyReplyError:
        # Nothing said twice: the floor searches, or the findings are the passages read
        # (researcher/task.py); with neither, the task fails with the error.
        may_search = bool(tools) and floor.due(state, AIMessage(""), 0)
        if not (may_search or state.get("sources")):
            raise
        reply = AIMessage("")
    if tools and floor.due(state, reply, _usable_queries(reply)):
        reply = floor.search_reply(reply, WEB_SEARCH, state["topic"])
        query = reply.tool_calls[-1]["args"]["queries"][0]
        progress.emit("floor", id=state["tool_call_id"], acted="searched", detail=query)
    # Its own id: the search step after it starts fresh only on this reply.
    reply = reply.model_copy(update={"id": f"think-{uuid.uuid4().hex}"})
    process.hand_over(here, reply.id or "")
    return {
        "messages": [reply],
        "turns": state.get("turns", 0) + 1,
        "usage": ledger.usage,
        "cost": counted + ledger.spent,
        **listed,
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


def _usable_queries(reply: AIMessage) -> int:
    """How many of the reply's queries the search step would send (junk is refused there)."""
    return sum(
        1
        for call in reply.tool_calls
        for query in _queries(call)
        if not search_service.clean(query).refused
    )


def route_researcher(state: ResearcherState) -> Literal["think", "search", "__end__"]:
    last = state["messages"][-1]
    if not isinstance(last, AIMessage):  # the turn was stopped mid-call: it runs again
        return "think"
    return "search" if last.tool_calls else "__end__"


def _queries(call: ToolCall) -> list[str]:
    """The queries a `web_search` call will run (none for a malformed or unknown call)."""
    if call["name"] != WEB_SEARCH:
        return []
    try:
        return WebSearch.model_validate(call["args"]).queries[:MAX_QUERIES_PER_CALL]
    except ValidationError:
        return []


async def search(state: ResearcherState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run the researcher's queries in parallel: cached, within its share, pages read.

    The step may send what is left of the task's share, counted in state before it started;
    started again after a stop, it reuses the searches answered before and sends only what
    cannot have gone out (search/budget.py)."""
    context = context_of(runtime)
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    here, token = scope(state), last.id or ""
    wanted = sum(len(_queries(call)) for call in last.tool_calls)
    allowed = state["share"]["searches"]
    grant = search_service.Grant(
        max(0, min(wanted, allowed - state["searches"])),
        share=allowed,
        counted_before=state["searches"],
        cap=context.max_searches_per_run,
        went_out=process.sent_by_step(here, token, process.take_over(here, token)),
    )
    # The cache spans the whole run (thread): every researcher, every orchestrator turn.
    chars = context.max_chars_per_turn // max(1, len(last.tool_calls))
    shown = _shown(state["messages"], "pages_shown"), _shown(state["messages"], "listed")
    mcp = mcp_tools.Calls.of(state)
    scholarly = state.get("scholarly", False)
    async with search_service.session(
        context, run_key=here[0], owner=state["tool_call_id"], topic=state["topic"], grant=grant
    ) as searching:
        # One call after another: each call's durable searches start in a fixed order.
        answers = [
            await mcp.answer(call)
            if mcp.wants(call)
            else await _answer_call(call, searching, chars, shown, (context, scholarly))
            for call in last.tool_calls
        ]
    messages = [message for message, _ in answers]
    searches = state["searches"] + grant.used
    ran = [i for i, message in enumerate(messages) if message.status != "error"]
    if ran:  # the budget is told where results are, not in an error's one-line example
        left = max(0, allowed - searches)
        last_ran = messages[ran[-1]]
        messages[ran[-1]] = last_ran.model_copy(
            update={"content": f"{last_ran.content}\n\n({left} searches left on this topic.)"}
        )
    messages = [m.model_copy(update={"id": f"search-{uuid.uuid4().hex}"}) for m in messages]
    process.hand_over(here, messages[-1].id or "")  # the next turn starts fresh on these
    return {
        "messages": messages,
        "sources": [source for _, sources in answers for source in sources],
        "searches": searches,
        "mcp_calls": state.get("mcp_calls", 0) + mcp.counted,
        "usage": search_usage(grant),
    }


def search_usage(grant: search_service.Grant) -> Usage:
    """The step's searches as usage: role "search" holds their count and cost; the run's
    `calls` and tokens stay the model's, its `usd` is everything. Not held to the cost
    budget: `max_searches_per_run` bounds searches before any is sent."""
    used = RoleUsage(
        calls=grant.used, tokens_in=0, tokens_out=0, usd=grant.cost / MICROS, estimated=0
    )
    if not grant.used:
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
    offer: tuple[Context, bool],
) -> tuple[ToolMessage, list[Source]]:
    """One tool call's message and the sources its queries retrieved; `offer`: the run's
    context and whether the topic is scholarly (the sources it may choose)."""
    call_id = call.get("id") or ""
    if call["name"] != WEB_SEARCH:
        name = call["name"]
        text = f"Unknown tool {name!r}: use the tools offered, such as {WEB_SEARCH}. "
        text += f"Example: {WEB_SEARCH_EXAMPLE}"
        return ToolMessage(text, tool_call_id=call_id, status="error"), []
    try:
        queries = WebSearch.model_validate(call["args"]).queries
    except ValidationError as error:
        text = f"{invalid_arguments(call['args'], error)} Example: {WEB_SEARCH_EXAMPLE}"
        return ToolMessage(text, tool_call_id=call_id, status="error"), []
    source, note = chosen_source(call, *offer)
    years, years_note = chosen_years(call, *offer)
    note = " ".join(part for part in (note, years_note) if part)
    answer = await searching.answer(
        queries[:MAX_QUERIES_PER_CALL], max_chars, *shown, source, years
    )
    text = f"{note}\n\n{answer.text}" if note else answer.text
    if len(queries) > MAX_QUERIES_PER_CALL:
        text += f"\n\nOnly the first {MAX_QUERIES_PER_CALL} queries were run."
    # The artifact is not shown to the model; it keeps fallbacks and skipped pages in the trace.
    return ToolMessage(text, tool_call_id=call_id, artifact=answer.trace), answer.sources


researcher_builder = StateGraph(ResearcherState, context_schema=Context)
researcher_builder.add_node(think)
researcher_builder.add_node(search)
researcher_builder.add_edge(START, "think")
researcher_builder.add_conditional_edges("think", route_researcher)
researcher_builder.add_edge("search", "think")
researcher_graph = researcher_builder.compile(name="researcher")
