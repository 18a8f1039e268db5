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
| `search` | `id`, `query`, `sent` (this task's so far), `quota` (its share), `cap` |
| `search_refused` | `id`, `query`, `cap` (the cap was reached) |
| `search_done` | `id`, `query`, `urls` (kept results), `dropped`, `usd` (what it cost) |
| `search_failed` | `id`, `query`, `error` |
| `fetch` | `id`, `url`, `chars` (text kept), `skipped` (why not read, or empty) |
| `model_call` | `role`, `model`, `tokens_in`, `tokens_out`, `usd` (null: unknown), `estimated` |
| `budget_reached` | `note` (why the report is written now, from what the run has) |
| `report_written` | `chars`, `failures`, `status` (`complete`, `unverified`, `no_sources`) |
| `memory` | `status` (`on`, `unavailable`), `where` or `reason`, `earlier` (recalled threads) |
| `memory_saved` | `where`, `pages` (the report and its cited pages are remembered) |
| `memory_skipped` | `status` (a report that is not `complete` is not remembered) |
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer

from deep_research.text import secrets


def emit(event: str, **fields: Any) -> None:
    """Send one progress event; a no-op when called outside a graph run (plain unit calls)."""
    try:
        writer = get_stream_writer()
    except (RuntimeError, KeyError):  # no runnable context, or no runtime in it
        return
    # Events reach terminals, SDK clients and the traffic log: never with a secret in them.
    writer(secrets.scrub({"event": event, **fields}))
