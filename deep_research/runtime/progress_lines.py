"""The one wording of each progress event (`runtime/progress.py`): a line for a person.

The CLI's live view and `replay` show these lines as they are; the MCP tool shows the
events worth a waiting caller's attention, capitalised, with the model's words cut short;
a notebook prints `printable_line`'s.
Light on purpose (no LangGraph): the CLI's `--help` path imports it.

A missing field the line needs raises `KeyError` (a replayed record of the wrong shape is
shown as unreadable; the MCP tool then shows nothing for it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from deep_research.text.controls import without_controls
from deep_research.text.wording import plural

if TYPE_CHECKING:  # only the type: `progress.py` imports LangGraph
    from deep_research.runtime.progress import ProgressEvent

# What a report that is not "complete" lacks (`state.ReportStatus`), in the user's words.
UNSOURCED = {
    "unverified": "every citation in it was removed (none led to a page the research retrieved)",
    "no_sources": "it cites no source",
}


def progress_line(
    event: Mapping[str, Any],
    *,
    words: Callable[[Any], str] = str,
    searches: int | None = None,
    topic: str | None = None,
) -> str | None:
    """One line for `event`; None for an event that is not worth a line.

    `words` renders what a model or a page wrote (topics, queries, errors): the MCP tool
    cuts it to one short line. `searches` is the run's count of searches sent, when the
    caller keeps one; without it a search is counted within its researcher's share.
    `topic` is the researcher's topic as its start event gave it, when the caller knows.
    """
    name: ProgressEvent | None = event.get("event")
    if name == "orchestrator_turn":
        return f"orchestrator turn {event['turn']} of {event['cap']}"
    if name == "todos":
        return _plan_line(event.get("todos") or [])
    if name == "plan_review":
        return _review_line(event)
    if name == "research_started":
        return f"researching: {words(event['topic'])}"
    if name == "search_refused":
        return f"search cap reached ({event['cap']}): {event['query']!r} not run"
    if name == "search" and searches is not None:
        return f"search {searches}/{event['cap']}: {words(event['query'])}"
    if name == "search":
        sent, share = event.get("sent"), event.get("share")
        return f"searching: {words(event.get('query'))} (search {sent} of {share})"
    if name == "search_failed":
        return f"search failed: {event.get('error')}"
    if name == "relevance_off":
        reason = words(event.get("reason"))
        return f"relevance not scored, results kept in the search's order: {reason}"
    if name == "mcp_call":
        return f"MCP tool {event.get('tool')}: {event.get('outcome')}"
    if name == "research_done":
        # `sources` is the distinct pages the researcher retrieved, not what a report cites.
        pages = plural(int(event.get("sources", 0)), "page")
        return f"research done: {words(_topic(event, topic))} ({pages})"
    if name == "research_failed":
        return f"research failed: {words(_topic(event, topic))} ({words(event['error'])})"
    if name == "memory":
        return memory_notice(event)
    if name == "memory_saving":
        return f"remembering the report and its {plural(int(event.get('pages', 0)), 'cited page')}"
    if name == "search_remembered":
        return f"answered from memory: {event['query']}"
    if name == "budget_reached":
        return str(event["note"])  # "The run stopped at its cost budget: ..." (orchestrator)
    if name in ("floor", "model_retry", "model_repaired", "reply_cut", "clarifier_gave_up"):
        return _model_line(event, words)
    if name == "one_slot":
        return (
            f"the model server at {words(event['endpoint'])} answers one request at a time: "
            "the researchers take turns at it"
        )
    if name == "report_written":
        size = plural(event["chars"], "character")
        warning = UNSOURCED.get(str(event.get("status")))
        return f"report written ({size}), but {warning}" if warning else f"report written ({size})"
    return None


def printable_line(event: object) -> str | None:
    """The CLI's line for an event of a run's custom stream, for a notebook or a script that
    prints them: without the control codes a model or a page may put in a topic or a query,
    and None for an event not worth a line or not of an event's shape."""
    if not isinstance(event, Mapping):
        return None
    try:
        line = progress_line(event)
    except (KeyError, TypeError, ValueError, AttributeError):  # the wrong shape: no line
        return None
    return None if line is None else without_controls(line)


# Why a model call was sent again (`llm.attempts.RetryReason`), in the user's words.
RETRY_REASONS = {
    "timeout": "no answer within LLM_TIMEOUT",
    "server_error": "the server failed",
    "cut": "its tool call was cut at the completion limit",
    "empty": "an empty reply, nudged once",
    "too_long": "too long for the server's context, shortened",
}
# What was done with a reply cut at its completion limit.
CUT_OUTCOMES = {
    "retried": "asked again",
    "continued": "continued",
    "kept": "kept as it is, marked as cut",
}
# What the floor did in code where the model did not (`acted`), and why.
FLOOR_ACTS = {
    "dispatched": "the model started no research, so the plan was sent to researchers in code",
    "searched": "the researcher made no usable search call, so its topic was searched in code",
    "quoted": "nothing read was cited, so passages the run read were quoted in",
}


def _model_line(event: Mapping[str, Any], words: Callable[[Any], str]) -> str:
    """The floor, a retry, a mended or cut reply, a clarifier that gave up: one line each."""
    name = event["event"]
    if name == "floor":
        acted = str(event["acted"])
        detail = f": {words(event['detail'])}" if event.get("detail") else ""
        return f"floor: {FLOOR_ACTS.get(acted, acted)}{detail}"
    if name == "model_retry":
        reason = str(event["reason"])
        said = event.get("error") if reason in ("server_error", "too_long") else None
        why = RETRY_REASONS.get(reason, reason) + (f" ({words(said)})" if said else "")
        return f"{event['role']} model tried again (attempt {event['attempt']}): {why}"
    if name == "model_repaired":
        return f"{event['role']} reply mended: {words(event['repair'])}"
    if name == "reply_cut":
        outcome = str(event["outcome"])
        return (
            f"{event['role']} reply cut at its completion limit ({event['tokens_out']} tokens): "
            f"{CUT_OUTCOMES.get(outcome, outcome)}"
        )
    return f"clarifier gave up ({words(event['reason'])}): researching the question as asked"


def _plan_line(todos: list[Mapping[str, Any]]) -> str:
    """`plan: a; b`, and once research ticked items off, how many: `(1 of 2 done)`."""
    done = sum(t.get("status") == "completed" for t in todos)
    count = f" ({done} of {len(todos)} done)" if done else ""
    return "plan: " + "; ".join(t["content"] for t in todos) + count


def _topic(event: Mapping[str, Any], known: str | None) -> Any:
    return known if known is not None else event["topic"]


def _review_line(event: Mapping[str, Any]) -> str:
    """What the user decided about the plan, and whether it will be asked about again."""
    outcome = event.get("outcome")
    if outcome == "approved":
        return "plan approved"
    if outcome == "replaced":
        return "plan replaced by yours"
    if outcome == "unanswered":
        return "no usable plan review: the plan runs as it is"
    if event.get("round") == event.get("max_rounds"):
        return (
            f"plan sent back (last review, {event.get('round')} of {event.get('max_rounds')}): "
            "the revised plan runs without asking again"
        )
    return f"plan sent back for changes (review {event.get('round')} of {event.get('max_rounds')})"


def memory_notice(event: Mapping[str, Any]) -> str | None:
    """The line that tells the user what memory found, or why there is none."""
    if event.get("status") == "unavailable":
        return f"memory unavailable, researching without it: {event.get('reason')}"
    earlier = [e for e in event.get("earlier") or [] if isinstance(e, dict)]
    only = " (from your documents alone)" if event.get("library_only") else ""
    if not earlier:
        # Said even so: a user of `--search library` learns why no web report is recalled.
        return "memory: only reports made from your documents alone are recalled" if only else None
    first = earlier[0]
    line = (
        f"You researched a similar question{only} on {first.get('date')}: "
        f"thread {first.get('thread_id')}"
    )
    if len(earlier) > 1:  # one line however many: `memory list` shows them all
        line += f" (and {plural(len(earlier) - 1, 'other')}: deep-research memory list)"
    return line
