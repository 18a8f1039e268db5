"""The graph's progress events as the MCP tool's progress messages: the lines of
`runtime/progress_lines.py`, for the events worth showing a waiting caller."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from deep_research.runtime.progress_lines import progress_line
from deep_research.text.controls import without_controls
from deep_research.text.wording import one_line

if TYPE_CHECKING:
    from deep_research.runtime.progress import ProgressEvent

SHOWN_CHARS = 100  # of a topic or query: a progress line, not a document
# The rest (todos, single fetches, cache hits) would be noise in a client's progress bar.
SHOWN_EVENTS: frozenset[ProgressEvent] = frozenset(
    {
        "orchestrator_turn",
        "research_started",
        "search",
        "research_done",
        "research_failed",
        "report_written",
        # A waiting caller should know why a run is slow or its report thin.
        "model_retry",
        "reply_cut",
        "floor",
        "clarifier_gave_up",
        "relevance_off",
    }
)
# Said once a run: the model that cannot compute is the same at every search.
SAID_ONCE: frozenset[object] = frozenset({"relevance_off"})


def progress_message(event: Mapping[str, Any]) -> str | None:
    """One line for a progress event worth showing a waiting caller; None for the rest."""
    if event.get("event") not in SHOWN_EVENTS:
        return None
    try:
        line = progress_line(event, words=short)
    except (KeyError, TypeError, ValueError):  # an event of the wrong shape: no line
        return None
    return line[:1].upper() + line[1:] if line else None


def short(value: Any) -> str:
    """`value` on one line, cut to `SHOWN_CHARS` (topics and queries come from a model)."""
    # Control codes go too: a terminal client would act on an escape sequence.
    return one_line(without_controls(value), SHOWN_CHARS)
