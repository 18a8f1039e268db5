"""The CLI's summary and progress lines: one source, one call; removed images and HTML."""

from __future__ import annotations

import re

import pytest

from deep_research.cli.summary import totals


def test_summary_and_progress_lines_say_one_source_and_one_call() -> None:
    from deep_research.cli.summary import totals
    from deep_research.cli.view import Tracker

    tracker = Tracker("t1")
    tracker.handle({"event": "research_started", "id": "r1", "topic": "heat pumps"})
    line = tracker.handle({"event": "research_done", "id": "r1", "sources": 1})
    assert line == "research done: heat pumps (1 source)"
    records = [{"kind": "model_reply", "role": "researcher", "tokens_in": 1, "tokens_out": 9}]
    [researcher, *_] = totals(records).lines()
    assert re.fullmatch(r"researcher\s+1 call\s+1 token in\s+9 out", researcher), researcher


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

    role = {"calls": 1, "tokens_in": 1, "tokens_out": 1, "estimated": 0}
    values = {
        "usage": {
            **role,
            "usd": 0.0144,
            "estimated": 2,
            "by_role": {
                "orchestrator": {**role, "usd": 0.0036},
                "researcher": {**role, "usd": None},
            },
        },
        "cost_counted": 14_400,
    }
    line = cost_line(values, 0.04)
    assert line.startswith("cost          $0.0144 (orchestrator $0.0036, researcher unknown)")
    assert (
        "2 calls' tokens estimated" in line
        and "budget $0.0400 for model calls, $0.0256 left" in line
    )
    assert cost_line({}, None) == "cost          $0.0000"


def test_the_logged_cost_adds_calls_and_searches_and_an_unknown_price_stays_unknown() -> None:
    calls = [
        {"kind": "progress", "event": "model_call", "usd": 0.0018},
        {"kind": "progress", "event": "search_done", "usd": 0.008},
        {"kind": "progress", "event": "search_done"},  # an older log: no `usd`, free
        {"kind": "progress", "event": "model_call", "usd": "bad"},  # a hand edit counts 0
    ]
    assert totals(calls).usd == pytest.approx(0.0098)
    assert totals(calls).model_usd == pytest.approx(0.0018)
    unknown = [*calls, {"kind": "progress", "event": "model_call", "usd": None}]
    assert totals(unknown).usd is None
