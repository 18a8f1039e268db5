"""The top-level graph as built: its nodes, its edges, and the server's factory."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from deep_research.config.names import ConfigError
from deep_research.graph import builder, graph, make_graph
from tests.support.cli import fresh_python

NODES = {
    "new_question",
    "recall",
    "clarify",
    "ask_user",
    "orchestrate",
    "review_plan",
    "answer_tools",
    "research",
    "finalize",
    "remember",
}


def test_the_builder_has_the_nodes_checkpoints_are_keyed_by() -> None:
    assert set(builder.nodes) == NODES


def test_each_input_runs_question_recall_clarify_then_ends_after_remember() -> None:
    edges = set(builder.edges)
    for edge in [
        ("__start__", "new_question"),
        ("new_question", "recall"),
        ("recall", "clarify"),
        ("ask_user", "clarify"),
        ("research", "orchestrate"),
        ("answer_tools", "orchestrate"),
        ("finalize", "remember"),
        ("remember", "__end__"),
    ]:
        assert edge in edges


def test_the_routers_can_reach_only_their_named_nodes() -> None:
    drawn = graph.get_graph()
    exits: dict[str, set[str]] = {}
    for edge in drawn.edges:
        exits.setdefault(edge.source, set()).add(edge.target)
    # A model step stopped mid-call (or, for the orchestrator, by the budget) runs again.
    assert exits["orchestrate"] == {
        "research",
        "answer_tools",
        "finalize",
        "review_plan",
        "orchestrate",
    }
    assert exits["review_plan"] == {"research", "answer_tools", "finalize", "orchestrate"}
    assert exits["clarify"] == {"ask_user", "orchestrate", "clarify"}


def test_the_graph_shows_the_design_and_nothing_else() -> None:
    """new_question → recall → clarify ⇄ ask_user → orchestrate ⇄ (todos | plan review |
    research × N) → finalize → remember; the researcher thinks ⇄ searches."""
    from deep_research.researcher.graph import researcher_graph

    assert set(graph.get_graph().nodes) == NODES | {"__start__", "__end__"}
    assert set(researcher_graph.get_graph().nodes) == {"__start__", "think", "search", "__end__"}


def server_runtime(context: Any) -> Any:
    return SimpleNamespace(execution_runtime=SimpleNamespace(context=context))


def test_make_graph_rejects_a_context_key_that_is_not_a_setting() -> None:
    with pytest.raises(ConfigError, match="max_search_per_run"):
        make_graph(server_runtime({"max_search_per_run": 3}))


def test_make_graph_gives_the_graph_for_known_keys_or_no_execution() -> None:
    assert make_graph(server_runtime({"max_searches_per_run": 3})) is graph
    assert make_graph(server_runtime(None)) is graph
    reading: Any = SimpleNamespace(execution_runtime=None)  # a read of state or schemas
    assert make_graph(reading) is graph


def test_importing_the_graph_leaves_what_a_run_may_not_use_unimported() -> None:
    """chromadb (memory, opened once the run is under way) and the MCP client (only when
    servers are configured: `mcp` is half a second to import) wait until they are used."""
    code = (
        "import sys\n"
        "import deep_research.graph\n"
        "print(sorted(m for m in ('chromadb', 'mcp', 'deep_research.search.mcp_client')"
        " if m in sys.modules))\n"
    )
    assert fresh_python(code) == "[]"


def test_the_mcp_client_is_imported_off_the_event_loop_by_every_task_that_asks() -> None:
    """Half a second on the loop would stall every other task: the first MCP call imports
    it on a worker thread, and a second task that asks while that import is under way
    waits for it on a thread too (here the import is made 0.5 s slow: on the loop, a tick
    would lag that long; off it, under 0.4 s even on a loaded machine, where the import's
    own work on its thread slowed ticks past 0.25 s once)."""
    code = (
        "import asyncio, sys, threading, time\n"
        "seen = []\n"
        "class Slow:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp':\n"
        "            seen.append(threading.current_thread() is threading.main_thread())\n"
        "            time.sleep(0.5)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Slow())\n"
        "from deep_research.search import mcp_tools\n"
        "async def main():\n"
        "    lag = 0.0\n"
        "    async def tick():\n"
        "        nonlocal lag\n"
        "        while True:\n"
        "            t = time.perf_counter()\n"
        "            await asyncio.sleep(0.01)\n"
        "            lag = max(lag, time.perf_counter() - t - 0.01)\n"
        "    ticker = asyncio.create_task(tick())\n"
        "    first = asyncio.create_task(mcp_tools._import_client())\n"
        "    await asyncio.sleep(0.1)\n"
        "    await mcp_tools._import_client()\n"
        "    from deep_research.search import mcp_client  # as the callers then do\n"
        "    await first\n"
        "    ticker.cancel()\n"
        "    print(seen, lag < 0.4)\n"
        "asyncio.run(main())\n"
    )
    assert fresh_python(code) == "[False] True"


def test_an_mcp_client_that_cannot_be_imported_leaves_the_research_without_its_tools() -> None:
    """A broken install (mcp missing) is a server whose tools cannot be listed: none are
    offered, and the research goes on with search."""
    code = (
        "import asyncio, sys\n"
        "sys.modules['mcp'] = None  # its import fails, as when the package is broken\n"
        "from deep_research.config.mcp_servers import McpServer\n"
        "from deep_research.search import mcp_tools\n"
        "print(asyncio.run(mcp_tools._listed(McpServer('notes', url='http://127.0.0.1:9'))))\n"
    )
    assert fresh_python(code) == "[]"


def test_an_mcp_install_broken_otherwise_than_missing_also_leaves_the_research_going() -> None:
    """A broken `mcp` often fails its import with AttributeError or TypeError, not only
    ImportError: the run goes on without its tools, as `doctor` says it will."""
    code = (
        "import asyncio, sys\n"
        "class Broken:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp':\n"
        "            raise AttributeError(\"module 'pydantic' has no attribute 'X'\")\n"
        "sys.meta_path.insert(0, Broken())\n"
        "from deep_research.config.mcp_servers import McpServer\n"
        "from deep_research.search import mcp_tools\n"
        "print(asyncio.run(mcp_tools._listed(McpServer('notes', url='http://127.0.0.1:9'))))\n"
    )
    assert fresh_python(code) == "[]"
