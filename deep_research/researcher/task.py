"""One `research` tool call as its own graph task: runs the research subgraph, contains
its failures, checks its report's citations, starts memory's preparation of the pages it
cites (`memory.prepare`) and hands the orchestrator a bounded result."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from deep_research import memory
from deep_research.citations import CheckedReport, check_report, quoted_evidence
from deep_research.citations.quoting import passages_in
from deep_research.config.settings import Context, context_of
from deep_research.llm import models, slots
from deep_research.researcher.graph import researcher_graph, scope
from deep_research.runtime import process, progress, tracing
from deep_research.state import NO_USAGE, RESEARCH, ResearcherState, ResearchTask, Source
from deep_research.text import fences, secrets
from deep_research.text.limits import REPORT_CHARS, cut
from deep_research.text.urls import source_key


async def research_task(task: ResearchTask, runtime: Runtime[Context]) -> dict[str, Any]:
    """One `research` tool call, run as its own graph task; a failure stays its own."""
    context = context_of(runtime)
    async with (
        process.turn_slots(task["dispatch_id"], context.max_researchers_per_turn),
        slots.in_lane(f"{task['dispatch_id']}:{task['tool_call_id']}"),  # ids repeat across runs
    ):
        progress.emit("research_started", id=task["tool_call_id"], topic=task["topic"])
        try:
            topic = HumanMessage(task["topic"], id=f"topic-{uuid.uuid4().hex}")
            start = ResearcherState(
                messages=[topic],
                sources=[],
                turns=0,
                searches=0,
                cost=0,
                usage=NO_USAGE,
                **task,
            )
            # A first run starts fresh on this message; a resumed subgraph keeps its own.
            process.hand_over(scope(start), topic.id or "")
            # "sync": each step's counts are on disk before the next step sends anything.
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
            # Born clean: it goes to the orchestrator's model, the state and the report.
            message = secrets.redact(f"{type(error).__name__}: {error}")
            progress.emit(
                "research_failed", id=task["tool_call_id"], topic=task["topic"], error=message
            )
            return {
                "messages": [
                    ToolMessage(
                        # An error's text can quote what a server sent: fenced as data.
                        f"Research on {task['topic']!r} failed. This topic has no findings: "
                        "say so in the report, or try a narrower topic. The error:\n"
                        + fences.fence(message, fences.new_nonce()),
                        tool_call_id=task["tool_call_id"],
                        name=RESEARCH,
                        status="error",
                    )
                ],
                "failures": [{"topic": task["topic"], "error": message}],
                **await _counted_after_failure(task),
            }
    sources = result.get("sources", [])
    # Checked against this researcher's own sources, before the orchestrator can copy a link.
    checked = _with_evidence(task, result["messages"][-1].text, sources)
    searches = result.get("searches", 0)  # from the subgraph's state: survives a resume
    progress.emit(
        "research_done",
        id=task["tool_call_id"],
        topic=task["topic"],
        sources=len(sources),
        searches=searches,
    )
    reply = ToolMessage(
        result_text(checked.body, sources, cited=len(checked.cited)),
        tool_call_id=task["tool_call_id"],
        name=RESEARCH,
        artifact={"citation_check": checked.check},
    )
    # Research came back: memory's slow work starts now, off the path, while the run goes on.
    memory.prepare([reply.text], sources, context)
    return {
        "messages": [reply],
        "sources": sources,
        "searches_used": searches - task["share"]["searches"],  # the unused part goes back
        "mcp_calls_used": result.get("mcp_calls", 0) - task["share"].get("mcp", 0),
        "usage": result.get("usage", NO_USAGE),
        "cost_counted": result.get("cost", 0) - task["share"].get("cost", 0),
    }


def _with_evidence(task: ResearchTask, findings: str, sources: list[Source]) -> CheckedReport:
    """The findings, checked; when they cite nothing the researcher read, the floor adds the
    most relevant passages it read, quoted and linked (citations/quoting.py)."""
    checked = check_report(findings, sources)
    if checked.cited or not sources:
        return checked
    evidence = quoted_evidence(task["topic"], sources)
    if not evidence:
        return checked
    quoted = passages_in(evidence)
    progress.emit("floor", id=task["tool_call_id"], acted="quoted", detail=f"{quoted} passages")
    return check_report(f"{findings.strip()}\n\n{evidence}", sources)


RESULT_HEADER = "The researcher's report:\n"


def result_text(report: str, sources: list[Source], cited: int = 0) -> str:
    """What the orchestrator reads of a finished topic, within `REPORT_CHARS`.

    The report's own links (checked, with their quotes) are what the orchestrator may cite;
    the pages it retrieved but did not cite are only counted: the orchestrator has none of
    their text, and listing them cost a tenth of every request it sent.
    The report quotes web text: it is fenced as data, with a nonce of its own, so nothing
    in it reads as an instruction.
    """
    uncited = len({source_key(s) for s in sources}) - cited
    more = f"\n\n({uncited} more pages retrieved, not cited.)" if uncited > 0 else ""
    room = REPORT_CHARS - len(RESULT_HEADER) - fences.FENCE_CHARS - len(more)
    return RESULT_HEADER + fences.fence(cut(report.strip(), room) + more, fences.new_nonce())


def _checkpointed() -> bool:
    """Whether this run has a checkpointer (a graph compiled without one has no durability)."""
    return get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER) is not None


async def _counted_after_failure(task: ResearchTask) -> dict[str, Any]:
    """The failed subgraph's checkpointed searches, cost and usage, with what it cannot have
    used of its share given back.

    The step that failed may have sent calls its state does not count yet (a step's counts
    are written when it returns): a search step may have sent up to the rest of the
    share's searches, and any step may have paid a model, so that much stays counted.
    Without a checkpointer nothing survives the failure, so the whole share is counted:
    more than was used, perhaps, but never less.
    """
    if not _checkpointed():
        return {"searches_used": 0, "cost_counted": 0, "mcp_calls_used": 0}
    share = task["share"]
    snapshot = await researcher_graph.aget_state(get_config())
    values, failed_in = snapshot.values, set(snapshot.next)
    searches = share["searches"] if "search" in failed_in else int(values.get("searches", 0))
    cost = share.get("cost", 0) if failed_in else int(values.get("cost", 0))
    mcp = share.get("mcp", 0) if "search" in failed_in else int(values.get("mcp_calls", 0))
    return {
        "searches_used": searches - share["searches"],
        "mcp_calls_used": mcp - share.get("mcp", 0),
        "cost_counted": cost - share.get("cost", 0),
        "usage": values.get("usage", NO_USAGE),
    }
