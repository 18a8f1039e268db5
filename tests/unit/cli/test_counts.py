"""`cli.counts`: one definition of each number a run shows (searches sent and reused,
cost, pages, sources), over the traffic log's records or the live events."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.cli.counts import cited_sources, page_keys, totals


def event(name: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "progress", "event": name, **fields}


def test_a_search_sent_is_answered_once_and_every_other_answer_is_reused() -> None:
    records = [
        event("search", id="r1", query="q"),
        event("search_done", id="r2", query="q", usd=0.0),  # joined r1's search
        event("search_done", id="r1", query="q", usd=0.008),  # r1's own
        event("search_done", id="r1", query="q", usd=0.0),  # asked again: cached
        event("search", id="r2", query="bad"),
        event("search_failed", id="r2", query="bad"),
        event("search_remembered", id="r2", query="m", urls=[]),  # memory, not this run
    ]
    counted = totals(records)
    assert (counted.searches, counted.reused, counted.remembered) == (2, 2, 1)
    assert counted.usd == 0.008 and counted.usd_by_role == {"search": 0.008}


def test_a_search_a_stopped_session_left_waiting_does_not_make_a_later_answer_its_own() -> None:
    records = [
        event("search", id="r1", query="q"),  # the session was killed before its results
        {"kind": "run", "action": "resume"},
        event("search", id="r1", query="q"),
        event("search_done", id="r1", query="q"),
        event("search_done", id="r1", query="q"),  # the resumed session's cache
    ]
    assert (totals(records).searches, totals(records).reused) == (2, 1)


def test_pages_are_one_per_page_key() -> None:
    urls = ["https://a.example/x", "https://A.example/x/?utm_source=n#frag", "https://b.example/"]
    sources: Any = [{"url": url, "title": "", "content": "", "found_by": "t"} for url in urls]
    assert len(page_keys(sources)) == 2


def test_sources_are_the_reports_list_from_its_check_or_the_end_record() -> None:
    assert cited_sources(None) is None and cited_sources({}) is None
    assert cited_sources({"sources_listed": 3}) == 3
    assert cited_sources({"sources_listed": "3; DROP"}) == 0, "a hand-edited log counts 0"
    end = {"kind": "run", "action": "end", "citation_check": {"sources_listed": 4}}
    assert totals([end]).sources == 4
    assert totals([{"kind": "run", "action": "end", "status": "failed"}]).sources is None


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


def test_retries_time_outs_cuts_repairs_and_the_floor_are_counted_from_their_events() -> None:
    counted = totals(
        [
            event("model_retry", role="researcher", reason="timeout", attempt=2),
            event("model_retry", role="researcher", reason="server_error", attempt=3),
            event("reply_cut", role="orchestrator", tokens_out=4096, outcome="kept"),
            event("model_repaired", role="researcher", repair="JSON repaired"),
            event("floor", id="", acted="dispatched", detail="2 topics"),
            event("floor", id="t1", acted="searched", detail="heat"),
            event("floor", id="t2", acted="searched", detail="cold"),
        ]
    )
    assert (counted.retries, counted.timeouts, counted.cuts, counted.repairs) == (2, 1, 1, 1)
    assert counted.floor == {"dispatched": 1, "searched": 2}
