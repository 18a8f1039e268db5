"""The CLI's summary and progress lines: one source, one call; removed images and HTML."""

from __future__ import annotations

import re
from typing import get_args

from deep_research.cli.counts import totals
from deep_research.cli.summary import STATUS_WORDS, totals_lines
from deep_research.state import ReportStatus


def test_summary_and_progress_lines_say_one_source_and_one_call() -> None:
    from deep_research.cli.view import Tracker

    tracker = Tracker("t1")
    tracker.handle({"event": "research_started", "id": "r1", "topic": "heat pumps"})
    line = tracker.handle({"event": "research_done", "id": "r1", "sources": 1})
    assert line == "research done: heat pumps (1 page)"
    records = [{"kind": "model_reply", "role": "researcher", "tokens_in": 1, "tokens_out": 9}]
    [researcher, *_] = totals_lines(totals(records))
    assert re.fullmatch(r"researcher\s+1 call\s+1 token in\s+9 out", researcher), researcher


def test_tokens_estimated_for_replies_without_usage_are_counted_and_marked() -> None:
    """A reply with no usage logs 0 tokens (`model_reply`); what the budget was charged for
    it (`model_call`, `estimated`) is in the summary, marked, beside a reported call's."""
    estimated = {"kind": "progress", "event": "model_call", "role": "researcher", "estimated": 1}
    records = [
        {"kind": "model_reply", "role": "researcher", "tokens_in": 0, "tokens_out": 0},
        {**estimated, "tokens_in": 1_200, "tokens_out": 340, "usd": 0.0004},
        {"kind": "model_reply", "role": "researcher", "tokens_in": 34, "tokens_out": 10},
        {**estimated, "tokens_in": 34, "tokens_out": 10, "usd": 0.0001, "estimated": 0},
        {"kind": "model_reply", "role": "orchestrator", "tokens_in": 5, "tokens_out": 2},
    ]
    orchestrator, researcher, *_ = totals_lines(totals(records))
    assert re.fullmatch(
        r"researcher\s+2 calls\s+~1,234 tokens in\s+~350 out \(estimated\)", researcher
    ), researcher
    assert re.fullmatch(r"orchestrator\s+1 call\s+5 tokens in\s+2 out", orchestrator)


def test_a_count_the_budget_did_not_take_is_not_added_but_its_estimate_is() -> None:
    records = [
        {
            "kind": "model_reply",
            "role": "researcher",
            "tokens_in": -5_000_000,
            "tokens_out": 10**12,
        },
        {"kind": "progress", "event": "model_call", "role": "researcher", "estimated": 1}
        | {"tokens_in": 40, "tokens_out": 7, "usd": 0.0},
    ]
    [researcher, *_] = totals_lines(totals(records))
    assert re.fullmatch(r"researcher\s+1 call\s+~40 tokens in\s+~7 out \(estimated\)", researcher)


def test_summary_mentions_removed_images_and_html_only_when_there_were_any() -> None:
    from deep_research.cli.summary import citation_line

    check = {
        "links_kept": 3,
        "fabricated_removed": 1,
        "fragments_kept": 2,
        "fragments_built": 1,
        "fragments_dropped": 0,
        "images_removed": 1,
        "html_removed": 2,
    }
    assert citation_line({"citation_check": check}).endswith("; 3 image/HTML links removed")
    check.update(images_removed=0, html_removed=1)
    assert citation_line({"citation_check": check}).endswith("; 1 image/HTML link removed")
    check.update(images_removed=0, html_removed=0)
    assert "images" not in citation_line({"citation_check": check})


def test_the_cost_line_names_each_role_unknown_prices_and_the_budget_left() -> None:
    from deep_research.cli.summary import cost_line

    def event(name: str, **fields: object) -> dict[str, object]:
        return {"kind": "progress", "event": name, **fields}

    logged = [
        event("model_call", role="orchestrator", usd=0.0036, estimated=1),
        event("model_call", role="researcher", usd=0.0012, estimated=1),
        event("search_done", id="r1", query="q", usd=0.008),
        event("search_done", id="r2", query="q", usd=0.0),  # reused: free
    ]
    line = cost_line(totals(logged), 0.04, counted_micros=14_400)
    assert line.startswith(
        "cost          $0.0128 (orchestrator $0.0036, researcher $0.0012, search $0.0080)"
    )
    assert (
        "2 calls' tokens estimated" in line
        and "budget $0.0400 for model calls, $0.0256 left" in line
    )
    unknown = cost_line(totals([*logged, event("model_call", role="researcher", usd=None)]), None)
    assert unknown.startswith("cost          unknown (orchestrator $0.0036, researcher unknown")
    assert cost_line(totals([]), None) == "cost          $0.0000"


def test_runs_names_every_status_but_complete() -> None:
    assert set(STATUS_WORDS) == set(get_args(ReportStatus)) - {"complete"}


def test_the_summary_says_retries_time_outs_cut_replies_and_what_the_floor_did() -> None:
    def progress(name: str, **fields: object) -> dict[str, object]:
        return {"kind": "progress", "event": name, **fields}

    lines = totals_lines(
        totals(
            [
                progress("model_retry", reason="timeout"),
                progress("model_retry", reason="cut"),
                progress("reply_cut", outcome="retried"),
                progress("floor", acted="dispatched"),
                progress("floor", acted="quoted"),
            ]
        )
    )
    assert "model calls   2 retries, 1 time-out, 1 reply cut at the limit" in lines
    assert "floor         the floor acted: dispatched 1, quoted 1" in lines
    assert not any(line.startswith(("model calls", "floor")) for line in totals_lines(totals([])))


def test_calls_of_mcp_tools_are_counted_with_their_failures_and_only_when_made() -> None:
    def call(outcome: str) -> dict[str, object]:
        event = {"event": "mcp_call", "id": "r1", "tool": "docs__search", "outcome": outcome}
        return {"kind": "progress", **event}

    assert not [line for line in totals_lines(totals([])) if line.startswith("mcp")]
    records = [call("answered"), call("the call took too long"), call("answered")]
    [line] = [line for line in totals_lines(totals(records)) if line.startswith("mcp")]
    assert line == "mcp tools     3 calls, 1 failed"
