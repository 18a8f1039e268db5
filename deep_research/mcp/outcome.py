"""What the tool's result says around the report: a warning first when the report cites no
retrieved page, and after it what the research cost and the thread to follow it up on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deep_research.text.wording import plural


def with_outcome(report: str, values: Mapping[str, Any]) -> str:
    """The report led by a warning when it cites no retrieved page (the CLI's exit code 3):
    a caller must not take a could-not-find text for a finished answer."""
    status = values.get("status")
    if status in (None, "complete"):
        return report
    from deep_research.runtime.progress_lines import UNSOURCED

    warning = f"Not a finished report: {UNSOURCED.get(str(status), str(status))}. "
    return f"{warning}{_cause(values)}\n\n{report}"


def _cause(values: Mapping[str, Any]) -> str:
    """Why the report cites no retrieved page, from the run's state (the CLI's advice reads
    its traffic log too): never the search provider for a model's failure."""
    if values.get("budget_note"):  # the budget stopped the research, not the search
        return (
            "The server's cost budget (max_cost_usd, MAX_COST_USD in its environment) "
            "stopped the research before it found a page to cite."
        )
    sources = values.get("sources")
    pages = len({s.get("url") for s in sources if isinstance(s, Mapping)}) if sources else 0
    if pages:
        return f"The research read {plural(pages, 'page')}, but the report cites none of them."
    searches = values.get("searches_used")
    if not isinstance(searches, int) or searches <= 0:
        return (
            "No search was sent: the server's model made no usable research or search call "
            "(`deep-research doctor` on the server checks whether it calls tools)."
        )
    return (
        f"The {plural(searches, 'search')} sent found nothing worth keeping: try a wider "
        "question or another search_provider."
    )


def cost_note(values: Mapping[str, Any]) -> str:
    """What the research cost, for the caller (the report file itself does not say)."""
    usage = values.get("usage")
    if not isinstance(usage, Mapping):
        return ""
    total = usage.get("usd")
    searched = (usage.get("by_role") or {}).get("search") or {}
    # Calls whose reply had no usage are counted at their estimate: marked, as the CLI does.
    guess, estimated = ("~", usage.get("estimated", 0)) if usage.get("estimated") else ("", 0)
    return (
        "\n\n---\nCost of this research: "
        + ("unknown (a model's price is not known)" if total is None else f"${total:,.4f}")
        + f" ({usage.get('calls', 0)} model calls, {guess}{usage.get('tokens_in', 0):,} tokens "
        f"in, {guess}{usage.get('tokens_out', 0):,} out"
        + (f", {estimated:,} calls' tokens estimated" if estimated else "")
        + f"; {searched.get('calls', 0)} searches)."
    )


def with_cost(
    result: str | list[Any], values: Mapping[str, Any], thread_id: str = ""
) -> str | list[Any]:
    """The result with its cost and its thread after the report's text (never inside an
    attached file)."""
    note = cost_note(values) + thread_note(thread_id)
    if isinstance(result, str):
        return result + note
    first, *rest = result
    return [first.model_copy(update={"text": first.text + note}), *rest]


def thread_note(thread_id: str) -> str:
    """How to ask a follow-up on this research: its thread, as the `thread` argument."""
    if not thread_id:
        return ""
    return (
        f"\nthread: {thread_id} (call deep_research with a new question and this `thread` "
        "to ask a follow-up on this research)"
    )
