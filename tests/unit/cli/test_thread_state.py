"""cli/thread_state.py: a run's status read from its checkpoint."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.cli.thread_state import status_of


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
