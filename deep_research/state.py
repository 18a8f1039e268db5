"""Typed graph states, their reducers, and the records that flow between nodes."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Final, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from deep_research.text.urls import source_key


class Source(TypedDict):
    """A page a researcher actually retrieved in this run."""

    url: str
    title: str
    content: str
    found_by: str
    retrieved: NotRequired[str]  # ISO date of a page recalled from memory (see memory/)
    # The page of a PDF found on the web this source is (its URL ends `#page=N`): only a
    # source marked so is a page of its own; another web URL's `#page=N` is no source's.
    pdf_page: NotRequired[int]


class RecalledReport(TypedDict):
    """An earlier report on a similar question, found in memory before research starts."""

    thread_id: str
    question: str
    date: str
    similarity: float
    excerpt: str


class Todo(TypedDict):
    content: str
    status: Literal["pending", "in_progress", "completed"]


class ResearchFailure(TypedDict):
    topic: str
    error: str


class CitationCheck(TypedDict):
    """What citation verification changed in a report (see deep_research/citations)."""

    links_kept: int
    fabricated_removed: int
    fragments_kept: int
    fragments_built: int
    fragments_dropped: int
    pdf_fragments_removed: int
    images_removed: int  # Markdown images of URLs never retrieved (they load unclicked)
    html_removed: int  # raw HTML tags removed or shown as text (see citations/html.py)
    tildes_escaped: int
    headings_fixed: int
    sources_listed: int
    removed_urls: list[str]


# What a finished report holds, decided from its citation check (`CheckedReport.status`):
# "complete" cites at least one retrieved page; "unverified" cited pages, but none was ever
# retrieved, so every citation was removed; "no_sources" cites nothing (a "could not find"
# text, say). Only "complete" is a success: the CLI exits 3 for the others.
ReportStatus = Literal["complete", "unverified", "no_sources"]
# The orchestrator's tool names, one constant each: its schemas (nodes/planning.py) take
# their titles from here, and every comparison with a call's or result's name uses them.
ToolName = Literal["research", "write_todos"]
RESEARCH: Final = "research"
WRITE_TODOS: Final = "write_todos"


class RoleUsage(TypedDict):
    """Model calls of one role: tokens as the provider reported them, or estimated."""

    calls: int
    tokens_in: int
    tokens_out: int
    usd: float | None  # None: a model whose price is unknown answered (never counted as 0)
    estimated: int  # calls whose tokens the provider did not report (llm/spending.py)


class Usage(RoleUsage):
    """What the thread's model calls used and cost, in all and per role."""

    by_role: dict[str, RoleUsage]


def _add_role(a: RoleUsage, b: RoleUsage) -> RoleUsage:
    usd = None if a["usd"] is None or b["usd"] is None else round(a["usd"] + b["usd"], 6)
    return RoleUsage(
        calls=a["calls"] + b["calls"],
        tokens_in=a["tokens_in"] + b["tokens_in"],
        tokens_out=a["tokens_out"] + b["tokens_out"],
        usd=usd,
        estimated=a["estimated"] + b["estimated"],
    )


NO_USAGE = Usage(calls=0, tokens_in=0, tokens_out=0, usd=0.0, estimated=0, by_role={})


def add_usage(current: Usage | None, new: Usage | None) -> Usage:
    """Usage adds up, role by role (a research task reports its subgraph's total once)."""
    current, new = current or NO_USAGE, new or NO_USAGE
    roles = dict(current["by_role"])
    for role, used in new["by_role"].items():
        roles[role] = _add_role(roles[role], used) if role in roles else used
    return Usage(**_add_role(current, new), by_role=roles)


class ChurnGuard(TypedDict):
    """The orchestrator's loop counters (see `deep_research/nodes/churn.py`)."""

    todo_calls: int
    todo_only_turns: int
    todos_locked: bool
    streaks: dict[str, int]  # call signature -> consecutive replies that made that call
    refused: dict[str, str]  # call id in the latest reply -> "locked", "repeated", "over_limit"


def merge_sources(current: list[Source], new: list[Source]) -> list[Source]:
    """One record per page (`source_key`), in order of first retrieval.

    A page retrieved again (by another query or researcher, or under another spelling of
    its URL) may bring a different snippet; its new paragraphs are added to the record,
    since citations are checked against them. The first URL seen is the one kept.
    """
    merged = list(current)
    index = {source_key(source): i for i, source in enumerate(merged)}
    for source in new:
        key = source_key(source)
        if key not in index:
            index[key] = len(merged)
            merged.append(source)
            continue
        kept = merged[index[key]]
        paragraphs = source["content"].split("\n\n")
        fresh = [p for p in paragraphs if p.strip() and p not in kept["content"]]
        if fresh:
            content = "\n\n".join([kept["content"], *fresh])
            merged[index[key]] = {**kept, "content": content}
    return merged


def extend_or_reset(current: list[Any], new: list[Any] | None) -> list[Any]:
    """Append; `None` starts the list afresh (a new question on the same thread)."""
    return [] if new is None else [*current, *new]


class Share(TypedDict):
    """A research task's share of the run's budgets, handed out when it is dispatched:
    what was left of each, split among the turn's research calls (search/budget.py)."""

    searches: int
    cost: NotRequired[int]  # µUSD; present only with a cost budget (`max_cost_usd`)
    mcp: NotRequired[int]  # calls of MCP servers' tools (`max_mcp_calls_per_run`)


def handed_out(shares: dict[str, Share]) -> dict[str, int]:
    """What handing out `shares` adds to the run's counts (`searches_used`, `cost_counted`)."""
    return {
        "searches_used": sum(share["searches"] for share in shares.values()),
        "cost_counted": sum(share.get("cost", 0) for share in shares.values()),
        "mcp_calls_used": sum(share.get("mcp", 0) for share in shares.values()),
    }


class InputState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class ResearchState(InputState):
    """The top-level graph's state."""

    todos: list[Todo]
    sources: Annotated[list[Source], merge_sources]
    failures: Annotated[list[ResearchFailure], extend_or_reset]
    # Searches counted for the thread: the orchestrator adds the shares it hands out, and
    # each research task, when it ends, gives back what it did not use (search/budget.py).
    searches_used: Annotated[int, operator.add]
    # Calls of MCP servers' tools counted for the thread, the way `searches_used` counts.
    mcp_calls_used: Annotated[int, operator.add]
    shares: dict[str, Share]  # research call id -> its share, for the latest orchestrator reply
    usage: Annotated[Usage, add_usage]
    # µUSD counted against `max_cost_usd`, the way `searches_used` counts searches: what
    # the top-level calls cost, plus each research task's share (`Share.cost`) until the
    # task gives back what it did not use (llm/spending.py).
    cost_counted: Annotated[int, operator.add]
    budget_note: str  # why the report was written early (the budget ran out), or ""
    pending_questions: list[str] | None  # None: the clarifier was stopped mid-call, asks again
    clarification_rounds: int
    orchestrator_turns: int
    plan_reviewed: bool  # the question's plan was reviewed (or needs no more review)
    plan_review_rounds: int  # plan reviews asked for this question
    plan_edited: bool  # the user replaced the plan: the next turn dispatches it in code
    churn: ChurnGuard
    final_report: str
    citation_check: CitationCheck
    status: ReportStatus
    question: str  # this input's question, as memory stores it with the report
    earlier_reports: list[RecalledReport]


class OutputState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    final_report: str
    sources: list[Source]
    failures: list[ResearchFailure]
    citation_check: CitationCheck
    status: ReportStatus
    usage: Usage


class ResearchTask(TypedDict):
    """What the orchestrator's `research` call hands to one research task (via `Send`)."""

    topic: str
    tool_call_id: str
    dispatch_id: str
    share: Share
    # The orchestrator marked the topic scholarly: its researcher may also choose the
    # sources `auto` offers (search.offers_scholarly). Absent in older checkpoints: False.
    scholarly: NotRequired[bool]


class ResearcherState(TypedDict):
    """The research subgraph's state."""

    messages: Annotated[list[AnyMessage], add_messages]
    topic: str
    tool_call_id: str
    dispatch_id: str
    share: Share
    scholarly: NotRequired[bool]  # as in its `ResearchTask`
    # Searches this task has sent (or counted as sent: in flight at a stop), a total
    # checkpointed after each search step (durability "sync"): the next step may send what
    # is left of its share, and a step that runs again after a stop sends nothing new.
    searches: int
    # µUSD this task's model calls cost (a call in flight at a stop at its worst case).
    cost: NotRequired[int]
    mcp_calls: NotRequired[int]  # calls of MCP tools this task made, counted like `searches`
    mcp_tools: NotRequired[list[dict[str, Any]]]  # the MCP tools offered (search/mcp_tools.py)
    usage: Annotated[Usage, add_usage]
    sources: Annotated[list[Source], merge_sources]
    turns: int
