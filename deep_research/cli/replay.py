"""`deep-research replay FILE`: a traffic log as a readable timeline, then its totals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from deep_research.cli.counts import totals
from deep_research.cli.summary import totals_lines
from deep_research.cli.view import Tracker
from deep_research.text.wording import one_line, plural

PREVIEW_CHARS = 100


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return one_line(text, PREVIEW_CHARS)


def _calls(calls: list[dict[str, Any]]) -> str:
    return ", ".join(f"{c['name']}({_preview(c.get('args', {}))})" for c in calls)


def record_line(record: dict[str, Any], tracker: Tracker) -> str | None:
    """One record as `label  text`; None for records that add nothing to a timeline."""
    kind = record.get("kind")
    role = record.get("role", "")
    if kind == "run":
        if record.get("action") in ("start", "resume", "follow_up"):
            tracker.unscored = False  # a new process: what it says once, it says again
        if record.get("action") == "start":
            return f"run start     {_preview(record.get('question', ''))}"
        if record.get("action") == "follow_up":  # a new question on the finished thread
            return f"run follow-up {_preview(record.get('question', ''))}"
        if record.get("action") == "end" and record.get("error"):
            return f"run failed    {record['error']}"
        if record.get("action") == "end" and record.get("report"):  # each answer's file
            return f"run end       report {_preview(record['report'])}"
        return f"run {record.get('action', '')}"
    if kind == "model_request":
        messages = record.get("messages") or []
        tools = ", ".join(record.get("tools") or []) or "none"
        return f"{role:<13} → {plural(len(messages), 'message')}, tools: {tools}"
    if kind == "model_reply":
        said = (
            _calls(record["tool_calls"])
            if record.get("tool_calls")
            else _preview(record.get("content", ""))
        )
        usage = f"{record.get('tokens_in', 0)} in / {record.get('tokens_out', 0)} out"
        if not record.get("tokens_in") and not record.get("tokens_out"):
            usage = "no usage sent"  # estimated: the `model_call` line after it says how much
        if record.get("finish_reason") == "length":
            usage += ", cut at the completion limit"
        return f"{role:<13} ← {said}  [{usage}, {record.get('seconds', 0):.2f}s]"
    if kind == "model_error":
        return f"{role:<13} ✗ {record.get('error')}  [{record.get('seconds', 0):.2f}s]"
    if kind == "tool_end":
        return f"{'tool':<13} {record.get('name')}  [{record.get('seconds', 0):.2f}s]"
    if kind == "tool_error":
        return f"{'tool':<13} {record.get('name')} failed: {record.get('error')}"
    if kind == "progress" and record.get("event") == "model_call" and record.get("estimated"):
        tokens = f"~{record.get('tokens_in', 0):,} in / ~{record.get('tokens_out', 0):,} out"
        return f"{role:<13} {tokens} (estimated: the reply had no usage)"
    if kind == "progress":
        line = tracker.handle(record)
        return f"{'progress':<13} {line}" if line else None
    if kind == "interrupt" and "plan" in record:  # a plan review (plan_review.py)
        items = "; ".join(str(item.get("content")) for item in record["plan"])
        return f"{'plan':<13} round {record.get('round')}: {items}"
    if kind == "interrupt":
        return f"{'question':<13} {'; '.join(record.get('questions', []))}"
    if kind == "answer":
        return f"{'answer':<13} {_preview(record.get('answer', ''))}"
    return None


def timeline(records: list[dict[str, Any]]) -> Iterator[str]:
    """The log as lines `+SECONDS  label  text`, followed by the run's totals."""
    if not records:
        yield "(empty traffic log)"
        return
    start = float(records[0]["t"])  # `read_log` keeps only records with a numeric `t`
    thread = next((r.get("thread") for r in records if r.get("thread")), "?")
    tracker = Tracker(str(thread))
    for record in records:
        try:
            text = record_line(record, tracker)
        except (KeyError, TypeError, ValueError, AttributeError):
            # `read_log` checked the envelope (kind, t); a field of the wrong shape inside
            # one record costs that record's line, not the timeline.
            text = f"{str(record.get('kind')):<13} (unreadable record)"
        if text is not None:
            yield f"+{float(record['t']) - start:8.2f}s  {text}"
    yield ""
    yield "Totals"
    yield from (f"  {line}" for line in totals_lines(totals(records)))
