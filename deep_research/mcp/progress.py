"""The graph's progress events (`runtime/progress.py`) as one-line progress messages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deep_research.text.controls import without_controls
from deep_research.text.one_line import one_line

SHOWN_CHARS = 100  # of a topic or query: a progress line, not a document


def describe(event: Mapping[str, Any]) -> str | None:
    """One line for a progress event worth showing a waiting caller; None for the rest."""
    name = event.get("event")
    if name == "orchestrator_turn":
        return f"Planning (turn {event.get('turn')} of {event.get('cap')})"
    if name == "research_started":
        return f"Researching: {short(event.get('topic'))}"
    if name == "research_done":
        return f"Finished: {short(event.get('topic'))} ({event.get('sources')} sources)"
    if name == "research_failed":
        return f"Research failed: {short(event.get('topic'))}"
    if name == "search":
        sent, quota = event.get("sent"), event.get("quota")
        return f"Searching: {short(event.get('query'))} (search {sent} of {quota})"
    if name == "report_written":
        return "Report written"
    return None


def short(value: Any) -> str:
    """`value` on one line, cut to `SHOWN_CHARS` (topics and queries come from a model)."""
    # Control codes go too: a terminal client would act on an escape sequence.
    return one_line(without_controls(value), SHOWN_CHARS)
