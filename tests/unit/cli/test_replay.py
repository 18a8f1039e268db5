"""`cli.replay`: traffic-log records as timeline lines, and the timeline around them."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.cli.replay import PREVIEW_CHARS, record_line, timeline
from deep_research.cli.view import Tracker


def line(**record: Any) -> str | None:
    return record_line(record, Tracker("t1"))


def test_run_records_say_start_failure_or_their_action() -> None:
    assert line(kind="run", action="start", question="why?") == "run start     why?"
    assert line(kind="run", action="end", error="boom") == "run failed    boom"
    assert line(kind="run", action="resume") == "run resume"


def test_model_traffic_shows_direction_size_calls_and_usage() -> None:
    request = line(kind="model_request", role="researcher", messages=[{}, {}], tools=["search"])
    assert request == f"{'researcher':<13} → 2 messages, tools: search"
    reply = line(
        kind="model_reply",
        role="researcher",
        tool_calls=[{"name": "search", "args": {"query": "heat"}}],
        tokens_in=10,
        tokens_out=3,
        seconds=1.5,
    )
    assert reply == f'{"researcher":<13} ← search({{"query": "heat"}})  [10 in / 3 out, 1.50s]'
    error = line(kind="model_error", role="clarifier", error="timed out", seconds=2)
    assert error == f"{'clarifier':<13} ✗ timed out  [2.00s]"


def test_a_reply_cut_at_its_completion_limit_says_so() -> None:
    reply = line(
        kind="model_reply",
        role="orchestrator",
        content="# Re",
        finish_reason="length",
        tokens_in=9,
        tokens_out=4,
    )
    assert reply and reply.endswith("[9 in / 4 out, cut at the completion limit, 0.00s]")
    whole = line(kind="model_reply", role="orchestrator", content="# Re", finish_reason="stop")
    assert whole and "cut" not in whole


def test_a_reply_without_usage_shows_the_estimate_it_was_charged_not_zero() -> None:
    reply = line(kind="model_reply", role="researcher", content="热泵", tokens_in=0, tokens_out=0)
    assert reply and reply.endswith("[no usage sent, 0.00s]")
    charged = {"kind": "progress", "event": "model_call", "role": "researcher", "usd": 0.001}
    estimate = line(**charged, tokens_in=1_234, tokens_out=56, estimated=1)
    assert estimate == f"{'researcher':<13} ~1,234 in / ~56 out (estimated: the reply had no usage)"
    assert line(**charged, tokens_in=1_234, tokens_out=56, estimated=0) is None, "reported"


def test_a_long_multi_line_reply_is_one_cut_line() -> None:
    reply = line(kind="model_reply", role="r", content="word\n" * 100)
    assert reply and "\n" not in reply
    assert len(reply.split(" ← ", 1)[1].split("  [", 1)[0]) <= PREVIEW_CHARS


def test_plan_questions_and_answers_each_have_a_label() -> None:
    plan = line(kind="interrupt", round=1, plan=[{"content": "a"}, {"content": "b"}])
    assert plan == f"{'plan':<13} round 1: a; b"
    assert line(kind="interrupt", questions=["x?", "y?"]) == f"{'question':<13} x?; y?"
    assert line(kind="answer", answer="ok") == f"{'answer':<13} ok"


@pytest.mark.parametrize("kind", ["tool_start", "unknown", None])
def test_records_that_add_nothing_have_no_line(kind: str | None) -> None:
    assert line(kind=kind) is None


def test_the_timeline_counts_from_the_first_record_and_ends_with_totals() -> None:
    records = [
        {"t": 100.0, "kind": "run", "action": "start", "question": "why?"},
        {"t": 101.5, "kind": "answer", "answer": "ok"},
        {"t": 102.0, "kind": "tool_start"},
        {"t": 103.0, "kind": "interrupt", "plan": "not a list"},
    ]
    lines = list(timeline(records))
    assert lines[0] == "+    0.00s  run start     why?"
    assert lines[1] == f"+    1.50s  {'answer':<13} ok"
    assert lines[2] == f"+    3.00s  {'interrupt':<13} (unreadable record)"
    assert lines[3:5] == ["", "Totals"] and all(x.startswith("  ") for x in lines[5:])


def test_an_empty_log_says_so() -> None:
    assert list(timeline([])) == ["(empty traffic log)"]


def test_every_give_up_repair_time_out_retry_cut_and_floor_has_one_line() -> None:
    events = [
        {"event": "clarifier_gave_up", "reason": "an unreadable reply"},
        {"event": "model_repaired", "role": "researcher", "repair": "JSON repaired"},
        {"event": "model_retry", "role": "researcher", "reason": "timeout", "attempt": 2},
        {"event": "reply_cut", "role": "orchestrator", "tokens_out": 4096, "outcome": "kept"},
        {"event": "floor", "id": "", "acted": "dispatched", "detail": "2 topics"},
    ]
    records = [{"t": 1.0 + n, "kind": "progress", **e} for n, e in enumerate(events)]
    lines = list(timeline(records))
    shown = [text for text in lines if "progress" in text]
    assert len(shown) == len(events)
    for text, word in zip(
        shown, ["clarifier gave up", "mended", "tried again", "cut", "floor"], strict=True
    ):
        assert word in text and "unreadable record" not in text
    assert "  model calls   1 retry, 1 time-out, 1 reply cut at the limit, 1 reply mended" in lines
    assert "  floor         the floor acted: dispatched 1" in lines


def test_a_follow_up_and_each_answers_report_have_their_lines() -> None:
    """A thread asked again keeps each question and each report in its timeline (#39)."""
    assert line(kind="run", action="follow_up", question="and noise?") == "run follow-up and noise?"
    ended = line(kind="run", action="end", status="done", report="reports/b.md")
    assert ended == "run end       report reports/b.md"


def test_unscored_results_are_said_once_a_process_and_again_in_a_later_one() -> None:
    """The log holds every process's records: the follow-up's own cause is shown too."""
    off = {"kind": "progress", "event": "relevance_off", "id": "r1"}
    records = [
        {"t": 0, "kind": "run", "action": "start", "thread": "t1", "question": "q"},
        {**off, "t": 1, "reason": "could not be imported"},
        {**off, "t": 2, "reason": "could not be imported"},
        {"t": 3, "kind": "run", "action": "end"},
        {"t": 4, "kind": "run", "action": "follow_up", "question": "q2"},
        {**off, "t": 5, "reason": "failed a pass"},
    ]
    said = [line for line in timeline(records) if "relevance not scored" in line]
    assert len(said) == 2 and "could not be imported" in said[0] and "failed a pass" in said[1]
