"""What the graph tests of memory's early work share: the world they run in (a scripted
orchestrator fanning out, local pages), a run, and the preparing threads watched and
joined (tests/graph/test_memory_prepare*.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.memory import preparing
from tests.support.fakes.page_server import PageServer
from tests.support.graph_scripts import orchestrator_fanning_out, script_for
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import PAGES_HOST, SamePages

PREPARE = "memory-prepare"
QUESTION = "How do heat pumps perform in cold climates?"
# Pages read in full (two local articles), so each is stored as chunks of its own text.
MEMORY_ON = {
    "allow_clarification": False,
    "fetch_top_n": 2,
    "relevance_threshold": 0.0,
    "use_memory": True,
}


@pytest.fixture
def world(
    use_script: Callable[..., ScriptedChatModel],
    pages: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = SamePages(f"http://{PAGES_HOST}:{pages.port}", "heat-pumps")
    monkeypatch.setattr("deep_research.search.step.make_provider", lambda name: provider)
    use_script(script_for(orchestrator_fanning_out("heat pumps in the cold")))


def join_prepare() -> None:
    """Wait for every preparing thread (they are daemons: nothing else waits for them)."""
    for thread in threading.enumerate():
        if thread.name == PREPARE:
            thread.join(120)


async def run(context: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    graph = builder.compile(checkpointer=InMemorySaver())
    events: list[dict[str, Any]] = []
    values: dict[str, Any] = {}
    async for namespace, mode, chunk in graph.astream(
        {"messages": [{"role": "user", "content": QUESTION}]},
        {"configurable": {"thread_id": "prepared"}},
        context=context,
        stream_mode=["custom", "values"],
        subgraphs=True,
    ):
        if mode == "custom":
            events.append(chunk)
        elif not namespace:
            values = chunk
    await asyncio.to_thread(join_prepare)
    return values, events


def watch_target(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[BaseException]]:
    """Record the threads `prepare` starts, and what their work raises (which the thread
    keeps quiet about)."""
    ran: list[str] = []
    raised: list[BaseException] = []
    real = preparing._prepare

    def watched(*args: Any) -> None:
        ran.append(threading.current_thread().name)
        try:
            real(*args)
        except BaseException as error:
            raised.append(error)
            raise

    monkeypatch.setattr(preparing, "_prepare", watched)
    return ran, raised
