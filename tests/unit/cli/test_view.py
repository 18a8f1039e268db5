"""`cli.view`: the tracker's counts from progress events, and which lines the view prints."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from deep_research.cli import view
from deep_research.cli.counts import Totals, totals
from deep_research.cli.view import ProgressView, Tracker


def earlier(searches: int) -> Totals:
    """What a resumed run's traffic log counted in earlier sessions."""
    return totals([{"kind": "progress", "event": "search", "t": 1.0}] * searches)


def test_searches_are_counted_for_the_run_and_each_researcher() -> None:
    tracker = Tracker("t1", totals=earlier(4))  # a resumed run goes on from its log
    tracker.handle({"event": "research_started", "id": 1, "topic": "heat"})
    line = tracker.handle({"event": "search", "id": 1, "cap": 9, "query": "cop"})
    tracker.handle({"event": "search", "id": 2, "cap": 9, "query": "unseen researcher"})
    assert line == "search 5/9: cop"
    assert tracker.totals.searches == 6 and tracker.researchers["1"].searches == 1
    tracker.handle({"event": "search_refused", "cap": 10, "query": "q"})
    assert tracker.totals.searches == 6 and tracker.search_cap == 10, "a refusal is not a search"


def test_a_query_answered_without_a_search_sent_for_it_is_reused() -> None:
    tracker = Tracker("t1", search_cap=9)
    tracker.handle({"event": "search", "id": 1, "query": "cop", "cap": 9})
    tracker.handle({"event": "search_done", "id": 1, "query": "cop", "urls": []})
    assert tracker.totals.reused == 0, "its own search's results"
    tracker.handle({"event": "search_done", "id": 2, "query": "cop", "urls": []})  # joined
    tracker.handle({"event": "search_done", "id": 1, "query": "cop", "urls": []})  # cached
    assert (tracker.totals.searches, tracker.totals.reused) == (1, 2)
    assert "searches 1/9 · 2 reused · pages 0 ·" in header_of(tracker)


def test_retries_and_time_outs_show_in_the_header_with_a_line_each() -> None:
    tracker = Tracker("t1", search_cap=9)
    assert "retr" not in header_of(tracker) and "time-out" not in header_of(tracker)
    retry = {"event": "model_retry", "role": "researcher", "reason": "timeout", "attempt": 2}
    assert tracker.handle(retry) == (
        "researcher model tried again (attempt 2): no answer within LLM_TIMEOUT"
    )
    tracker.handle({**retry, "reason": "server_error", "attempt": 3, "error": "HTTP 500: x"})
    assert "· 2 retries · 1 time-out ·" in header_of(tracker)


def test_pages_are_the_states_sources_by_page_key_and_sources_the_reports_list() -> None:
    tracker = Tracker("t1")
    page = {"title": "", "content": "", "found_by": "t"}
    tracker.settle({"sources": [{**page, "url": "https://a.example/x/"}]})
    tracker.settle({"sources": [{**page, "url": "https://A.example/x?utm_source=y#z"}]})
    tracker.settle({"messages": []})
    assert len(tracker.pages) == 1 and tracker.sources is None
    assert "pages 1 · cost" in header_of(tracker), "no sources before a report is checked"
    tracker.settle({"citation_check": {"sources_listed": 1}})
    assert "pages 1 · sources 1 · cost" in header_of(tracker)


def test_a_researcher_ends_done_with_its_sources_or_failed_with_its_error() -> None:
    tracker = Tracker("t1")
    for n in (1, 2):
        tracker.handle({"event": "research_started", "id": n, "topic": f"topic {n}"})
    tracker.handle({"event": "research_done", "id": 1, "sources": 2})
    tracker.handle({"event": "research_failed", "id": 2, "error": "model died"})
    done, failed = tracker.researchers["1"], tracker.researchers["2"]
    assert (done.status, done.detail) == ("done", "2 pages")
    assert (failed.status, failed.detail) == ("failed", "model died")
    assert tracker.handle({"event": "research_done", "id": 3}) is None, "never seen start"


def test_a_todo_is_ticked_as_its_research_finishes_and_unticked_when_it_fails() -> None:
    tracker = Tracker("t1")
    plan = ["Heat pump  COSTS", "Noise", "Grants"]
    tracker.handle({"event": "todos", "todos": [{"content": c, "status": "pending"} for c in plan]})
    for n, topic in enumerate(("heat pump costs", "noise", "unplanned"), start=1):
        tracker.handle({"event": "research_started", "id": n, "topic": topic})
    assert [t["status"] for t in tracker.todos] == ["in_progress", "in_progress", "pending"]
    tracker.handle({"event": "research_done", "id": 1, "sources": 2})
    tracker.handle({"event": "research_failed", "id": 2, "error": "model died"})
    tracker.handle({"event": "research_done", "id": 3, "sources": 1})
    assert [t["status"] for t in tracker.todos] == ["completed", "pending", "pending"]
    out = io.StringIO()
    Console(file=out, width=120).print(tracker)
    assert "[x] Heat pump  COSTS" in out.getvalue() and "[ ] Noise" in out.getvalue()


def test_the_phase_follows_the_orchestrator_and_the_report() -> None:
    tracker = Tracker("t1")
    assert tracker.phase == "starting"
    turn = tracker.handle({"event": "orchestrator_turn", "turn": 2, "cap": 6})
    assert turn and tracker.phase == turn
    tracker.handle({"event": "todos", "todos": [{"content": "a", "status": "pending"}]})
    assert tracker.todos == [{"content": "a", "status": "pending"}] and tracker.phase == turn
    tracker.handle({"event": "report_written", "chars": 1200})
    assert tracker.phase == "report written"
    tracker.handle({"event": "memory_saving", "pages": 1})
    assert tracker.phase == "remembering the report and its 1 cited page", "not a silent wait"


def test_a_resumed_run_leaves_its_first_phase_when_research_goes_on() -> None:
    # A resume may go on inside research tasks: no orchestrator turn is announced first.
    tracker = Tracker("t1", phase="resuming", totals=earlier(2), search_cap=6)
    assert "searches 2/6" in Text.assemble(tracker.__rich__().renderables[0]).plain
    tracker.handle({"event": "research_started", "id": 1, "topic": "heat"})
    assert tracker.phase == "researching"
    assert tracker.handle({"event": "search", "id": 1, "cap": 6, "query": "q"}) == "search 3/6: q"
    turn = tracker.handle({"event": "orchestrator_turn", "turn": 2, "cap": 6})
    tracker.handle({"event": "research_started", "id": 2, "topic": "noise"})
    assert tracker.phase == turn, "a later research keeps the turn shown"


def test_elapsed_is_minutes_and_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    tracker = Tracker("t1", started=100.0)
    monkeypatch.setattr(view.time, "monotonic", lambda: 100.0 + 125.9)
    assert tracker.elapsed() == "2:05"


def test_the_panel_shows_counts_todos_and_researchers() -> None:
    tracker = Tracker("t1")
    tracker.handle({"event": "todos", "todos": [{"content": "plan item", "status": "completed"}]})
    tracker.handle({"event": "research_started", "id": 1, "topic": "heat"})
    tracker.handle({"event": "search", "id": 1, "cap": 7, "query": "q"})
    out = io.StringIO()
    Console(file=out, width=120).print(tracker)
    text = out.getvalue()
    assert "thread t1" in text and "searches 1/7" in text and "pages 0" in text
    assert "[x] plan item" in text and "heat" in text and "running" in text


def test_without_a_terminal_every_line_is_printed_with_its_time() -> None:
    out = io.StringIO()
    shown = ProgressView(Tracker("t1"), Console(file=out, width=200))
    shown.start()  # no live panel off a terminal
    assert shown._display is None
    shown.show({"event": "search", "cap": 3, "query": "cop"})
    shown.show({"event": "nothing worth a line"})
    assert out.getvalue().splitlines() == ["[0:00] search 1/3: cop"]


def test_under_a_live_panel_only_memory_the_review_and_unscored_results_are_printed() -> None:
    out = io.StringIO()
    shown = ProgressView(Tracker("t1"), Console(file=out, width=200))
    shown.live = True  # as on a terminal, without starting the panel
    shown.show({"event": "search", "cap": 3, "query": "cop"})
    shown.show({"event": "memory", "status": "unavailable", "reason": "in use"})
    shown.show({"event": "plan_review", "action": "approved", "round": 1})
    for researcher in ("r1", "r2"):  # said once, however many searches say it
        shown.show({"event": "relevance_off", "id": researcher, "reason": "no onnxruntime"})
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and "cop" not in out.getvalue()
    assert not lines[0].startswith("[") and lines[1].startswith("[0:00] ")
    assert lines[2].startswith("[0:00] relevance not scored") and "no onnxruntime" in lines[2]


def header_of(tracker: Tracker) -> str:
    return Text.assemble(tracker.__rich__().renderables[0]).plain


def test_the_panel_adds_up_call_and_search_costs_and_shows_the_budget_left() -> None:
    spent = totals([{"kind": "progress", "event": "model_call", "usd": 0.01}])  # earlier
    tracker = Tracker("t1", totals=spent, max_cost_usd=0.05)
    assert "cost $0.0100 ($0.0400 left)" in header_of(tracker)
    assert tracker.handle({"event": "model_call", "role": "researcher", "usd": 0.0025}) is None
    tracker.handle({"event": "search_done", "urls": [], "usd": 0.008})
    assert tracker.totals.usd == pytest.approx(0.0205)
    # The budget holds model calls (searches are held by the search cap).
    assert "cost $0.0205 ($0.0375 left)" in header_of(tracker)
    tracker.handle({"event": "model_call", "role": "orchestrator", "usd": None})
    assert tracker.totals.usd is None and "cost unknown" in header_of(tracker), "never 0"
    assert "left" not in header_of(Tracker("t2", totals=spent)), "no budget, nothing left to show"


def test_the_budget_reached_line_is_printed_as_the_orchestrator_worded_it() -> None:
    out = io.StringIO()
    shown = ProgressView(Tracker("t1"), Console(file=out, width=300))
    note = "The run stopped at its cost budget: spent. This report is written from the research."
    shown.show({"event": "budget_reached", "note": note})
    assert note in out.getvalue()


def test_a_relevance_model_that_cannot_score_is_said_once_not_per_search() -> None:
    tracker = Tracker("t1")
    off = {"event": "relevance_off", "reason": "onnxruntime could not be imported"}
    first = tracker.handle({**off, "id": "r1"})
    assert first is not None and "onnxruntime could not be imported" in first
    assert first.startswith("relevance not scored, results kept in the search's order")
    assert tracker.handle({**off, "id": "r1"}) is None
    assert tracker.handle({**off, "id": "r2"}) is None
