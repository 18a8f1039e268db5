"""cli/runs.py: a thread's questions and reports read from its run records."""

from __future__ import annotations

from typing import Any


def test_a_threads_questions_are_each_kept_with_its_report() -> None:
    """The first question and each follow-up, with the report saved for it; a follow-up
    stopped before its report is the question `--resume` goes on with (#39)."""
    from deep_research.cli.runs import TrafficRecords, run_record

    def run(t: float, action: str, **fields: Any) -> dict[str, Any]:
        return {"kind": "run", "t": t, "action": action, **fields}

    records = [
        run(1, "start", question="First?", settings={"max_searches_per_run": 3}),
        run(2, "end", report="reports/first.md"),
        run(3, "follow_up", question="Second?", settings={"search_provider": "tavily"}),
        run(4, "end", report="reports/second.md"),
        run(5, "follow_up", question="Third?"),
        run(6, "end", error="boom"),
    ]
    record = run_record(TrafficRecords("log", records), "t1")
    assert record.question == "First?" and record.latest_question == "Third?"
    assert record.answers == [
        ("First?", "reports/first.md"),
        ("Second?", "reports/second.md"),
        ("Third?", None),
    ]
    assert record.settings == {"max_searches_per_run": 3, "search_provider": "tavily"}
