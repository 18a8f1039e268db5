"""cli/runs.py: a run's status read from its checkpoint."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.cli.runs import status_of


async def test_a_thread_stopped_in_a_step_this_version_lacks_is_refused_in_one_line() -> None:
    """A checkpoint from before the durable calls, stopped at a reserve step: refused with
    the version named, never resumed into an obscure langgraph error."""
    from langgraph.checkpoint.memory import InMemorySaver

    from deep_research.errors import OldDataError
    from deep_research.graph import builder

    saver = InMemorySaver()
    await _stop_at_a_removed_step(saver, "old")
    with pytest.raises(OldDataError, match=r"reserve_orchestrate.*0\.1\.0|0\.1\.0.*reserve"):
        await status_of(builder.compile(checkpointer=saver), "old")


async def test_the_run_list_shows_an_old_thread_as_such_and_every_other_run() -> None:
    """`deep-research runs` after an upgrade: one thread stopped at a removed step must not
    take the whole list down."""
    from langgraph.checkpoint.memory import InMemorySaver

    from deep_research.cli.runs_table import OLD_STATUS, statuses_in
    from deep_research.graph import builder

    saver = InMemorySaver()
    await _stop_at_a_removed_step(saver, "old")
    graph = builder.compile(checkpointer=saver)
    assert await statuses_in(graph, ["old", "never-run"]) == [OLD_STATUS, "not started"]


async def _stop_at_a_removed_step(saver: Any, thread_id: str) -> None:
    """A thread as 0.1.0 left it: stopped before `reserve_orchestrate`, a step now gone."""
    from langgraph.graph import START, StateGraph

    from deep_research.state import ResearchState

    old = StateGraph(ResearchState)
    old.add_node("new_question", lambda state: {})
    old.add_node("reserve_orchestrate", lambda state: {})
    old.add_edge(START, "new_question")
    old.add_edge("new_question", "reserve_orchestrate")
    stopped = old.compile(checkpointer=saver, interrupt_before=["reserve_orchestrate"])
    await stopped.ainvoke({"messages": [("user", "q")]}, {"configurable": {"thread_id": thread_id}})


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
