"""Each progress event worded once for a person: what each line carries, what a caller's
`words`, `searches` and `topic` change, and the events that get no line."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from deep_research.runtime.progress_lines import (
    UNSOURCED,
    memory_notice,
    printable_line,
    progress_line,
)
from deep_research.state import ReportStatus

SEARCH = {"event": "search", "id": "r", "query": "cop", "sent": 2, "share": 3, "cap": 9}


def shouted(value: Any) -> str:
    return str(value).upper()


def test_model_words_go_through_words_and_counts_do_not() -> None:
    assert (
        progress_line({"event": "research_started", "topic": "heat"}, words=shouted)
        == "researching: HEAT"
    )
    done = progress_line({"event": "research_done", "topic": "heat", "sources": 1}, words=shouted)
    assert done == "research done: HEAT (1 page)"
    failed = progress_line(
        {"event": "research_failed", "topic": "heat", "error": "boom"}, words=shouted
    )
    assert failed is not None and "HEAT" in failed and "BOOM" in failed


def test_a_search_is_counted_in_its_share_or_in_the_runs_count() -> None:
    assert progress_line(SEARCH) == "searching: cop (search 2 of 3)"
    assert progress_line(SEARCH, searches=7) == "search 7/9: cop"


def test_a_known_topic_stands_for_the_events_own() -> None:
    event = {"event": "research_done", "id": "r", "sources": 2}  # the topic came with the start
    assert progress_line(event, topic="heat pumps") == "research done: heat pumps (2 pages)"
    with pytest.raises(KeyError):
        progress_line(event)


@pytest.mark.parametrize(
    "event", [{"event": "orchestrator_turn", "turn": 1}, {"event": "search_refused", "query": "q"}]
)
def test_a_missing_field_the_line_needs_is_a_key_error(event: dict[str, Any]) -> None:
    with pytest.raises(KeyError):
        progress_line(event)


def test_each_review_outcome_has_its_own_line_and_the_last_round_says_so() -> None:
    lines = {
        outcome: progress_line(
            {"event": "plan_review", "outcome": outcome, "round": 1, "max_rounds": 2}
        )
        for outcome in ("approved", "replaced", "unanswered", "feedback")
    }
    assert len(set(lines.values())) == 4 and "review 1 of 2" in str(lines["feedback"])
    last = progress_line(
        {"event": "plan_review", "outcome": "feedback", "round": 2, "max_rounds": 2}
    )
    assert last is not None and "last review" in last and "without asking again" in last


def test_counts_and_plans_are_written_out() -> None:
    turn = progress_line({"event": "orchestrator_turn", "turn": 2, "cap": 6})
    assert turn == "orchestrator turn 2 of 6"
    written = progress_line({"event": "report_written", "chars": 1200})
    assert written == "report written (1,200 characters)"
    todos = [{"content": "a", "status": "pending"}, {"content": "b", "status": "pending"}]
    assert progress_line({"event": "todos", "todos": todos}) == "plan: a; b"
    todos[1]["status"] = "completed"  # research ticked it off
    assert progress_line({"event": "todos", "todos": todos}) == "plan: a; b (1 of 2 done)"


def test_events_not_worth_a_line_get_none() -> None:
    for event in ({"event": "fetch", "url": "u"}, {"event": "memory_saved"}, {}):
        assert progress_line(event) is None


def test_memory_says_why_it_is_off_or_which_earlier_threads_it_found() -> None:
    off = memory_notice({"status": "unavailable", "reason": "locked"})
    assert off is not None and off.endswith(": locked")
    earlier = [
        {"date": "2026-01-02", "thread_id": "t1"},
        "junk",
        {"date": "2026-03-04", "thread_id": "t2"},
    ]
    found = memory_notice({"earlier": earlier})
    assert found == (
        "You researched a similar question on 2026-01-02: thread t1 "
        "(and 1 other: deep-research memory list)"
    ), "one line however many earlier threads"
    assert memory_notice({"earlier": []}) is None
    assert progress_line({"event": "memory", "earlier": earlier}) == found


def test_remembering_the_report_is_said_while_it_happens() -> None:
    line = progress_line({"event": "memory_saving", "pages": 3})
    assert line == "remembering the report and its 3 cited pages"


def test_a_report_without_a_retrieved_source_says_so_when_written() -> None:
    def line(status: str) -> str | None:
        return progress_line({"event": "report_written", "chars": 10, "status": status})

    assert line("complete") == "report written (10 characters)"
    assert line("no_sources") == "report written (10 characters), but it cites no source"
    assert str(line("unverified")).endswith(
        "every citation in it was removed (none led to a page the research retrieved)"
    )


def test_every_status_but_complete_is_worded() -> None:
    assert set(UNSOURCED) == set(get_args(ReportStatus)) - {"complete"}


@pytest.mark.parametrize(
    ("event", "line"),
    [
        (
            {"event": "model_retry", "role": "researcher", "reason": "timeout", "attempt": 2},
            "researcher model tried again (attempt 2): no answer within LLM_TIMEOUT",
        ),
        (
            {
                "event": "model_retry",
                "role": "orchestrator",
                "reason": "server_error",
                "attempt": 3,
                "error": "HTTP 503: loading model",
            },
            "orchestrator model tried again (attempt 3): the server failed "
            "(HTTP 503: loading model)",
        ),
        (
            {"event": "reply_cut", "role": "researcher", "tokens_out": 4096, "outcome": "retried"},
            "researcher reply cut at its completion limit (4096 tokens): asked again",
        ),
        (
            {"event": "reply_cut", "role": "orchestrator", "tokens_out": 4096, "outcome": "kept"},
            "orchestrator reply cut at its completion limit (4096 tokens): kept as it is, "
            "marked as cut",
        ),
        (
            {"event": "model_repaired", "role": "researcher", "repair": "JSON repaired"},
            "researcher reply mended: JSON repaired",
        ),
        (
            {"event": "clarifier_gave_up", "reason": "an unreadable reply"},
            "clarifier gave up (an unreadable reply): researching the question as asked",
        ),
        (
            {"event": "floor", "id": "", "acted": "dispatched", "detail": "3 topics"},
            "floor: the model started no research, so the plan was sent to researchers in code: "
            "3 topics",
        ),
        (
            {"event": "one_slot", "endpoint": "http://localhost:8080/v1"},
            "the model server at http://localhost:8080/v1 answers one request at a time: the "
            "researchers take turns at it",
        ),
    ],
)
def test_every_give_up_repair_retry_cut_and_floor_has_a_line(
    event: dict[str, Any], line: str
) -> None:
    assert progress_line(event) == line


def test_what_a_model_or_server_wrote_in_these_lines_goes_through_words() -> None:
    retry = {"event": "model_retry", "role": "r", "reason": "server_error", "attempt": 2}
    assert "BOOM" in str(progress_line({**retry, "error": "boom"}, words=shouted))
    floor = {"event": "floor", "acted": "searched", "detail": "heat"}
    assert str(progress_line(floor, words=shouted)).endswith(": HEAT")


def test_a_printed_line_is_the_clis_without_control_codes_and_never_raises() -> None:
    started = {"event": "research_started", "id": "r1", "topic": "heat\x1b]8;;http://x\x07 pumps"}
    assert printable_line(started) == "researching: heat]8;;http://x pumps"
    refused = {"event": "search_refused", "query": "q\x1b[2J", "cap": 3}
    assert printable_line(refused) == "search cap reached (3): 'q\\x1b[2J' not run"
    assert printable_line({"event": "plan_review", "outcome": "approved"}) == "plan approved"
    assert printable_line({"event": "research_done"}) is None, "a wrong shape: no line"
    assert printable_line({"event": "todos", "todos": ["not an item"]}) is None
    assert printable_line(("namespace", {"event": "orchestrator_turn"})) is None
    assert printable_line({"event": "fetch", "url": "u"}) is None, "not worth a line"
