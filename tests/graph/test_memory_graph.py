"""Memory in the graph, on real Chroma and MiniLM: recalled, used before the web, or absent."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.memory import (
    PASSAGES_COLLECTION,
    REPORTS_COLLECTION,
    Hit,
    Location,
    Piece,
    open_store,
)
from deep_research.memory.research import DAY, iso_date
from tests.support.graph_scripts import LINK, orchestrator_fanning_out, script_for
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

REPO = Path(__file__).resolve().parents[2]
TOPIC = "heat pump efficiency in cold climates"
QUESTION = "How do heat pumps perform in cold climates?"
MEMORY_ON = {"allow_clarification": False, "fetch_top_n": 0, "use_memory": True}


async def run(context: dict[str, Any], thread: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    graph = builder.compile(checkpointer=InMemorySaver())
    events: list[dict[str, Any]] = []
    values: dict[str, Any] = {}
    question = {"messages": [{"role": "user", "content": QUESTION}]}
    async for namespace, mode, chunk in graph.astream(
        question,
        {"configurable": {"thread_id": thread}},
        context=context,
        stream_mode=["custom", "values"],
        subgraphs=True,
    ):
        if mode == "custom":
            events.append(chunk)
        elif not namespace:  # the top graph's state, not a subgraph's
            values = chunk
    return values, events


async def pages_retrieved_days_ago(memory_dir: Path, days: int) -> str:
    """Move every stored page's retrieval `days` back; returns that date."""
    store = await open_store(Location(path=memory_dir))
    when = time.time() - days * DAY
    pages: dict[str, list[Hit]] = {}
    for hit in await store.items(PASSAGES_COLLECTION):
        pages.setdefault(hit.key, []).append(hit)
    for key, hits in pages.items():
        hits.sort(key=lambda hit: int(hit.metadata["chunk"]))
        older = [
            Piece(
                hit.text,
                {
                    **{k: v for k, v in hit.metadata.items() if k not in ("key", "chunk")},
                    "retrieved": iso_date(when),
                    "ts": when,
                },
            )
            for hit in hits
        ]
        await store.put(PASSAGES_COLLECTION, key, older)
    return iso_date(when)


@pytest.fixture
def memory_dir() -> Path:
    return Path(os.environ["MEMORY_DIR"])  # the test's own (conftest's clean_env)


@pytest.fixture
def scripted(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> tuple[ScriptedChatModel, ScriptedSearch]:
    return use_script(script_for(orchestrator_fanning_out(TOPIC))), scripted_search


@pytest.mark.slow
async def test_a_second_run_answers_from_memory_and_still_cites(
    scripted: tuple[ScriptedChatModel, ScriptedSearch], memory_dir: Path
) -> None:
    model, search = scripted
    first, _ = await run(MEMORY_ON, "first-run")
    searched_first = len(search.queries)
    assert searched_first >= 1 and first["citation_check"]["links_kept"] >= 1
    # The pages were retrieved five days ago, as far as the second run can tell: the
    # Sources list must show that date, not the day memory gave them back.
    earlier = await pages_retrieved_days_ago(memory_dir, 5)

    second, events = await run(MEMORY_ON, "second-run")
    assert len(search.queries) - searched_first < searched_first  # fewer web searches
    assert len(search.queries) == searched_first  # here: none at all
    assert second["citation_check"]["links_kept"] == first["citation_check"]["links_kept"]
    today = datetime.now(UTC).date().isoformat()
    assert f"(retrieved {earlier})" in second["final_report"]
    assert f"(retrieved {today})" not in second["final_report"]
    assert any(e["event"] == "search_remembered" for e in events)
    # The earlier report reached the orchestrator with its date and thread, fenced.
    (recalled,) = [e for e in events if e["event"] == "memory"]
    assert recalled["earlier"] == [{"thread_id": "first-run", "date": today}]
    system = next(
        str(m.content)
        for messages, _tools in model.calls
        for m in messages
        if isinstance(m, SystemMessage) and "Earlier research" in str(m.content)
    )
    assert "thread first-run" in system and "<<<data " in system


@pytest.mark.slow
async def test_a_rerun_writing_from_the_earlier_report_keeps_every_citation_it_had(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    """The same question again, answered from the recalled report with no research at all:
    the pages that report cited are the run's as read, so no citation is lost."""
    use_script(script_for(orchestrator_fanning_out(TOPIC)))
    first, _ = await run(MEMORY_ON, "first-run")
    cited = set(LINK.findall(first["final_report"]))
    assert cited and first["citation_check"]["fabricated_removed"] == 0

    def from_memory(messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        earlier = system.split("Earlier research", 1)[-1] if "Earlier research" in system else ""
        links = dict.fromkeys(LINK.findall(earlier))
        return AIMessage("# Report\n\n" + " ".join(f"[c]({u})" for u in links))

    searched = len(scripted_search.queries)
    use_script(script_for(from_memory))
    # No search at all (none answered from memory either): only the recalled report's pages.
    second, _ = await run({**MEMORY_ON, "max_searches_per_run": 0}, "second-run")
    assert len(scripted_search.queries) == searched, "no research: written from memory"
    assert second["citation_check"]["fabricated_removed"] == 0, "no citation removed"
    assert set(LINK.findall(second["final_report"])) == cited, "every page cited again"
    today = datetime.now(UTC).date().isoformat()
    assert f"(retrieved {today})" in first["final_report"], "fresh pages carry their date too"
    assert f"(retrieved {today})" in second["final_report"]


async def test_use_memory_false_reads_and_writes_nothing(
    scripted: tuple[ScriptedChatModel, ScriptedSearch], memory_dir: Path
) -> None:
    _, search = scripted
    await run(MEMORY_ON, "remembered")
    store = await open_store(Location(path=memory_dir))
    before = [len(await store.items(c)) for c in (REPORTS_COLLECTION, PASSAGES_COLLECTION)]
    searched = len(search.queries)

    off = {**MEMORY_ON, "use_memory": False}
    values, events = await run(off, "forgetful")
    assert len(search.queries) == 2 * searched  # memory answered nothing
    assert values["earlier_reports"] == []
    assert not [e for e in events if e["event"].startswith("memory")]
    assert [len(await store.items(c)) for c in (REPORTS_COLLECTION, PASSAGES_COLLECTION)] == before


async def test_memory_off_never_creates_a_store(
    scripted: tuple[ScriptedChatModel, ScriptedSearch], memory_dir: Path
) -> None:
    values, _ = await run({**MEMORY_ON, "use_memory": False}, "t")
    assert values["final_report"] and list(memory_dir.iterdir()) == []


async def test_a_damaged_store_is_named_and_the_run_goes_on(
    scripted: tuple[ScriptedChatModel, ScriptedSearch], memory_dir: Path
) -> None:
    (memory_dir / "chroma.sqlite3").write_bytes(b"not a database" * 50)
    values, events = await run(MEMORY_ON, "t")
    assert values["citation_check"]["links_kept"] >= 1
    reasons = [e["reason"] for e in events if e.get("status") == "unavailable"]
    assert reasons and all("cannot be read" in r for r in reasons)


@pytest.mark.slow
async def test_a_store_locked_by_another_process_is_named_and_the_run_goes_on(
    scripted: tuple[ScriptedChatModel, ScriptedSearch], memory_dir: Path
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.support.memory_writer", "hold"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        values, events = await run(MEMORY_ON, "t")
    finally:
        holder.communicate("")
    assert values["citation_check"]["links_kept"] >= 1
    reasons = [e["reason"] for e in events if e.get("status") == "unavailable"]
    assert reasons and "in use by another process" in reasons[0]
