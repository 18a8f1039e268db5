"""The research graph over this directory's checkpoints, and how far a thread in it got.

Opened by a run (`cli/session.py`) and by `deep-research runs`; the graph is imported only
when one is opened, so `--help` and a usage error do not wait for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

from deep_research.cli.runs import Home
from deep_research.config.private import private_directory
from deep_research.errors import OldDataError

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

Status = Literal["done", "waiting for an answer", "stopped mid-run", "not started"]


@asynccontextmanager
async def durable_graph(home: Home) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    """The research graph checkpointing to `.deep_research/checkpoints.sqlite`, or to the
    PostgreSQL database DEEP_RESEARCH_CHECKPOINTS names."""
    # Imported here: the graph costs ~2 s, and `--help` or a usage error should not wait.
    from deep_research.checkpoints import open_checkpointer
    from deep_research.graph import builder

    private_directory(home.root)  # checkpoints and run logs: the user's only
    async with open_checkpointer(home.target()) as saver:
        yield builder.compile(checkpointer=saver)


async def status_of(graph: CompiledStateGraph[Any, Any, Any, Any], thread_id: str) -> Status:
    config: Any = {"configurable": {"thread_id": thread_id}}
    state = await graph.aget_state(config)
    if state.interrupts:
        return "waiting for an answer"
    if state.values.get("final_report") and not state.next:
        return "done"
    # A thread stopped in a step this version no longer has (the reserve steps) shows no
    # next step at all: langgraph reads the checkpoint through today's graph.
    from langgraph.checkpoint.base import BaseCheckpointSaver

    saver = graph.checkpointer
    saved = await saver.aget_tuple(config) if isinstance(saver, BaseCheckpointSaver) else None
    channels = saved.checkpoint["channel_versions"] if saved else {}
    if stale := sorted({c[10:] for c in channels if c.startswith("branch:to:")} - set(graph.nodes)):
        said = f"it stopped at {', '.join(stale)}, a step this version no longer has"
        raise OldDataError(f"Thread {thread_id!r}", f"{said}; ask the question again.")
    return "stopped mid-run" if state.next else "not started"
