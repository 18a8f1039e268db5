"""Progress events sent from inside nodes, for anyone streaming with `stream_mode="custom"`.

Every event is a small JSON-ready dict with an `"event"` name. The CLI's live view, the
SDK and Studio all read the same stream; `progress_lines.py` words each event for a person
(the CLI and the MCP tool show its lines). Events raised inside a research task come from
its subgraph, so they arrive only when streaming with subgraphs (`subgraphs=True` in
Python, `stream_subgraphs=True` in the SDK).

| event | fields |
| --- | --- |
| `orchestrator_turn` | `turn`, `cap` |
| `todos` | `todos` (list of `{content, status}`) |
| `plan_review` | `outcome` (approved, replaced, feedback, unanswered), `round`, `max_rounds` |
| `research_started` | `id`, `topic` |
| `research_done` | `id`, `topic`, `sources`, `searches` |
| `research_failed` | `id`, `topic`, `error` |
| `search` | `id`, `query`, `sent` (this task's so far), `share` (its searches), `cap` |
| `search_refused` | `id`, `query`, `cap` (the cap was reached) |
| `search_done` | `id`, `query`, `urls` (kept results), `dropped`, `usd` (what it cost) |
| `search_failed` | `id`, `query`, `error` |
| `search_lost` | `id`, `query` (under way when the run stopped, no answer saved: counted as sent) |
| `search_remembered` | `id`, `query`, `urls` (answered from memory: no search sent) |
| `relevance_off` | `id`, `reason` (no relevance model: this search's results kept unfiltered) |
| `mcp_call` | `id`, `tool` (`server__tool`), `outcome` (`answered`, or why not, in fixed words) |
| `fetch` | `id`, `url`, `chars` (text kept), `skipped` (why not read, or empty) |
| `model_call` | `role`, `model`, `tokens_in`, `tokens_out`, `usd` (null: unknown), `estimated` |
| `budget_reached` | `note` (why the report is written now, from what the run has) |
| `report_written` | `chars`, `failures`, `status` (`complete`, `unverified`, `no_sources`) |
| `memory` | `status` (`on`, `unavailable`), `where` or `reason`, `earlier` (recalled threads) |
| `memory_saving` | `pages` (remembering the report and its cited pages has begun) |
| `memory_saved` | `where`, `pages` (the report and its cited pages are remembered) |
| `memory_skipped` | `status` (a report that is not `complete` is not remembered) |
| `floor` | `id` (a task's, or empty), `acted` (`dispatched`, `searched`, `quoted`), `detail` |
| `model_retry` | `role`, `model`, `attempt`, `error`, `reason` (timeout, server_error, cut, ...) |
| `model_repaired` | `role`, `model`, `repair` (what was mended: a call read from text, ...) |
| `reply_cut` | `role`, `model`, `tokens_out`, `outcome` (`retried`, `continued`, `kept`) |
| `clarifier_gave_up` | `reason` (why research starts without clarifying questions) |
| `one_slot` | `endpoint` (its server answers one request at a time: researchers take turns) |
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.config import get_stream_writer

from deep_research.text import secrets

# Every event a node sends, each in the table above. A node that sends a name not here, or a
# consumer that matches one, fails `mypy`; the tests check each name is sent and in the table.
ProgressEvent = Literal[
    "orchestrator_turn",
    "todos",
    "plan_review",
    "research_started",
    "research_done",
    "research_failed",
    "search",
    "search_refused",
    "search_done",
    "search_failed",
    "search_lost",
    "search_remembered",
    "relevance_off",
    "mcp_call",
    "fetch",
    "model_call",
    "budget_reached",
    "report_written",
    "memory",
    "memory_saving",
    "memory_saved",
    "memory_skipped",
    "floor",
    "model_retry",
    "model_repaired",
    "reply_cut",
    "clarifier_gave_up",
    "one_slot",
]


def emit(event: ProgressEvent, **fields: Any) -> None:
    """Send one progress event; a no-op when called outside a graph run (plain unit calls)."""
    try:
        writer = get_stream_writer()
    except (RuntimeError, KeyError):  # no runnable context, or no runtime in it
        return
    # Events reach terminals, SDK clients and the traffic log: never with a secret in them.
    writer(secrets.scrub({"event": event, **fields}))
