"""The research subgraph (researcher ⇄ capped search node) and the task that runs it."""

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
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphBubbleUp
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deep_research import models, process, progress, prompts, tracing
from deep_research.citations import check_report
from deep_research.context import Context, context_of
from deep_research.limits import cut_report
from deep_research.search import budget, digest
from deep_research.search.cache import run_cache
from deep_research.search.chain import SearchChain
from deep_research.search.fetch import PageFetcher
from deep_research.search.lookup import Lookup, QueryOutcome
from deep_research.search.netguard import AddressPolicy
from deep_research.search.providers import make_provider
from deep_research.state import ResearcherState, ResearchTask, Source
from deep_research.toolcalls import invalid_arguments

MAX_QUERIES_PER_CALL = 4


class WebSearch(BaseModel):
    """Search the web. Runs the queries in parallel; each query uses one search from the budget."""

    model_config = ConfigDict(title="web_search")
    queries: list[str] = Field(
        min_length=1, description=f"1-{MAX_QUERIES_PER_CALL} natural-language search queries"
    )


WEB_SEARCH_EXAMPLE = 'web_search({"queries": ["EU battery recycling capacity 2025"]})'


async def think(state: ResearcherState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The researcher's turn: search more, or write the cited report."""
    context = context_of(runtime)
    model = models.role_model(context, "researcher")
    system = SystemMessage(
        prompts.render("researcher", max_queries=MAX_QUERIES_PER_CALL, quota=state["quota"])
    )
    turns = state.get("turns", 0) + 1
    if turns >= context.max_researcher_turns:
        wrap_up = HumanMessage(prompts.render("researcher_wrap_up"))
        reply = await model.ask([system, *_as_plain_text(state["messages"]), wrap_up])
    else:
        reply = await model.ask([system, *state["messages"]], tools=[WebSearch])
    return {"messages": [reply], "turns": turns}


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


def route_researcher(state: ResearcherState) -> Literal["reserve", "__end__"]:
    last = state["messages"][-1]
    return "reserve" if isinstance(last, AIMessage) and last.tool_calls else "__end__"


def reserve(state: ResearcherState) -> dict[str, Any]:
    """Count the searches the next step may send, in state, before it sends any."""
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    wanted = sum(len(_queries(call)) for call in last.tool_calls)
    reservation = budget.reserve(wanted, state["quota"], state["searches"])
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
    if not budget.may_send(reservation):
        # This step already ran under this reservation and did not finish (a crash, Ctrl-C):
        # its searches may have been sent, so they stay counted; reserve again to retry.
        return Command(goto="reserve")
    assert reservation is not None
    context = context_of(runtime)
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    owner = state["tool_call_id"]
    grant = budget.Grant(
        reservation["granted"],
        quota=state["quota"],
        counted_before=state["searches"] - reservation["granted"],
        cap=context.max_searches_per_run,
    )
    chain = SearchChain(
        [make_provider(name) for name in [context.search_provider, *context.fallback_providers]]
    )
    # The cache spans the whole run (thread): every researcher, every orchestrator turn.
    thread_id = get_config().get("configurable", {}).get("thread_id")
    cache = run_cache(str(thread_id or state["dispatch_id"]))
    share = context.max_chars_per_turn // max(1, len(last.tool_calls))
    async with PageFetcher(
        AddressPolicy.from_env(), timeout=context.fetch_timeout, max_chars=context.max_page_chars
    ) as fetcher:
        lookup = Lookup(
            chain=chain,
            cache=cache,
            grant=grant,
            owner=owner,
            fetcher=fetcher,
            max_results=context.max_results_per_search,
            threshold=context.relevance_threshold,
            fetch_top_n=context.fetch_top_n,
        )
        answers = await asyncio.gather(
            *(_answer_call(call, lookup, context.max_page_chars, share) for call in last.tool_calls)
        )
    topic = state["topic"]
    found = [
        Source(url=f.result.url, title=f.result.title, content=f.retrieved_text, found_by=topic)
        for _, outcomes in answers
        for outcome in outcomes
        for f in outcome.findings
    ]
    update = {
        "messages": [message for message, _ in answers],
        "sources": found,
        "searches": state["searches"] - grant.unused,  # what was not sent goes back
        "reservation": None,
    }
    return Command(goto="think", update=update)


async def _answer_call(
    call: ToolCall, lookup: Lookup, max_page_chars: int, max_chars: int
) -> tuple[ToolMessage, list[QueryOutcome]]:
    """One tool call's message and the outcome of each query it ran."""
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
    outcomes = list(await asyncio.gather(*(lookup.run(q) for q in queries[:MAX_QUERIES_PER_CALL])))
    text = digest.render(
        outcomes, nonce=digest.new_nonce(), max_page_chars=max_page_chars, max_chars=max_chars
    )
    if len(queries) > MAX_QUERIES_PER_CALL:
        text += f"\n\nOnly the first {MAX_QUERIES_PER_CALL} queries were run."
    # The artifact is not shown to the model; it keeps fallbacks and skipped pages in the trace.
    trace = {
        "notes": [note for outcome in outcomes for note in outcome.notes],
        "errors": [outcome.error for outcome in outcomes if outcome.error],
        "skipped_pages": [
            {"url": f.result.url, "reason": f.page.skipped}
            for outcome in outcomes
            for f in outcome.findings
            if f.page and f.page.skipped
        ],
        "dropped": sum(outcome.dropped for outcome in outcomes),
    }
    return ToolMessage(text, tool_call_id=call_id, artifact=trace), outcomes


researcher_builder = StateGraph(ResearcherState, context_schema=Context)
researcher_builder.add_node(think)
researcher_builder.add_node(reserve)
researcher_builder.add_node(search, destinations=("think", "reserve"))
researcher_builder.add_edge(START, "think")
researcher_builder.add_conditional_edges("think", route_researcher)
researcher_builder.add_edge("reserve", "search")
researcher_graph = researcher_builder.compile(name="researcher")


class OldCheckpointError(RuntimeError):
    """A research task checkpointed by an older version, whose search budget worked otherwise."""


async def research(task: ResearchTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """One `research` tool call, run as its own graph task; a failure stays its own."""
    context = context_of(runtime)
    if "quota" not in task:
        raise OldCheckpointError(
            "This run was checkpointed by an older deep_research whose search budget worked "
            "differently; it cannot be resumed. Start the question again."
        )
    async with process.turn_slots(task["dispatch_id"], context.max_researchers_per_turn):
        progress.emit("research_started", id=task["tool_call_id"], topic=task["topic"])
        try:
            start = ResearcherState(
                messages=[HumanMessage(task["topic"])],
                sources=[],
                turns=0,
                searches=0,
                reservation=None,
                **task,
            )
            # "sync": each reservation is on disk before the step that sends its searches.
            result = await researcher_graph.ainvoke(
                start,
                tracing.research_config(task["topic"], context),
                context=context,
                durability="sync" if _checkpointed() else None,
            )
        except (GraphBubbleUp, models.ModelEndpointError):
            # An unreachable model server is an outage, not a finding about this topic: the
            # run stops with one clear error and a resume re-runs only the unfinished tasks.
            raise
        except Exception as error:  # containment boundary: recorded and reported below
            message = f"{type(error).__name__}: {error}"
            progress.emit(
                "research_failed", id=task["tool_call_id"], topic=task["topic"], error=message
            )
            return {
                "messages": [
                    ToolMessage(
                        f"Research on {task['topic']!r} failed ({message}). This topic has no "
                        "findings: say so in the report, or try a narrower topic.",
                        tool_call_id=task["tool_call_id"],
                        name="research",
                        status="error",
                    )
                ],
                "failures": [{"topic": task["topic"], "error": message}],
                "searches_used": await _searches_counted(task["quota"]) - task["quota"],
            }
    sources = result.get("sources", [])
    # Checked against this researcher's own sources, before the orchestrator can copy a link.
    checked = check_report(result["messages"][-1].text, sources)
    searches = result.get("searches", 0)  # from the subgraph's state: survives a resume
    progress.emit(
        "research_done",
        id=task["tool_call_id"],
        topic=task["topic"],
        sources=len(sources),
        searches=searches,
    )
    listing = "\n".join(f"- [{s['title']}]({s['url']})" for s in sources)
    return {
        "messages": [
            ToolMessage(
                cut_report(f"{checked.body.strip()}\n\nSources retrieved:\n{listing or '(none)'}"),
                tool_call_id=task["tool_call_id"],
                name="research",
                artifact={"citation_check": checked.check},
            )
        ],
        "sources": sources,
        "searches_used": searches - task["quota"],  # the unused part goes back
    }


def _checkpointed() -> bool:
    """Whether this run has a checkpointer (a graph compiled without one has no durability)."""
    return get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER) is not None


async def _searches_counted(quota: int) -> int:
    """The failed subgraph's checkpointed search count (reserved searches included).

    Without a checkpointer nothing survives the failure, so the whole quota is counted:
    more than was sent, perhaps, but never fewer.
    """
    if not _checkpointed():
        return quota
    snapshot = await researcher_graph.aget_state(get_config())
    return int(snapshot.values.get("searches", 0))
