"""`memory.prepare`: when a research task comes back, memory's slow parts start on a thread
of their own, and the report is embedded as soon as the orchestrator writes it, so
`remember` embeds nothing; never with memory off, and silently when the store cannot be
used (`remember` says so)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research import embedding
from deep_research.citations import check_report
from deep_research.graph import builder
from deep_research.memory import (
    PASSAGES_COLLECTION,
    REPORTS_COLLECTION,
    Location,
    chunks,
    open_store,
    preparing,
    research,
)
from deep_research.memory.location import LOCK_NAME
from deep_research.state import Source
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


def cited_pages(values: dict[str, Any]) -> list[research.CitedPage]:
    return [
        research.CitedPage(source.url, source.title, source.texts, source.retrieved_on)
        for source in check_report(values["final_report"], values["sources"]).cited
    ]


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


@pytest.mark.slow
@pytest.mark.usefixtures("world")
async def test_remember_embeds_nothing_the_pages_and_report_were_embedded_as_they_came(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = embedding.embedder()
    monkeypatch.setattr(model, "_cache", OrderedDict())  # no other test's vectors
    computed: list[tuple[str, str]] = []  # (thread, text), in the order they were computed
    real_compute = model._compute

    def recording(texts: list[str]) -> Any:
        computed.extend((threading.current_thread().name, text) for text in texts)
        return real_compute(texts)

    monkeypatch.setattr(model, "_compute", recording)
    prepared: list[tuple[bool, int]] = []  # (background, texts) of each request prepare makes
    real_submit = model.submit

    def watched_submit(texts: Any, *, background: bool = False) -> Any:
        if threading.current_thread().name == PREPARE:
            prepared.append((background, len(texts)))
        return real_submit(texts, background=background)

    monkeypatch.setattr(model, "submit", watched_submit)
    # The scripted orchestrator writes at once; a real model takes longer than preparing.
    remembered_from: list[int] = []
    real_remember = research.remember

    ready: list[str] = []  # the collections whose handles `remember` found made

    async def remember_after_the_model(store: Any, *args: Any, **kwargs: Any) -> int:
        await asyncio.to_thread(join_prepare)
        remembered_from.append(len(computed))
        ready.extend(store._collections)
        return await real_remember(store, *args, **kwargs)

    monkeypatch.setattr(research, "remember", remember_after_the_model)
    ran, raised = watch_target(monkeypatch)

    values, _ = await run(MEMORY_ON)

    assert ran == [PREPARE] and raised == []
    pages = cited_pages(values)
    assert len(pages) == 2
    page_texts = {text for page in pages for text in research.page_chunks(page)}
    assert page_texts
    (start,) = remembered_from
    for text in page_texts:
        # Computed once, on the model's thread, before `remember` began: for `prepare`.
        (index,) = [i for i, (_, t) in enumerate(computed) if t == text]
        assert index < start and computed[index][0] == "minilm", text[:60]
    # Small background requests: a search scoring meanwhile is never stuck behind a page.
    assert prepared and all(
        background and 0 < size <= preparing.PREPARED_PER_PASS for background, size in prepared
    ), prepared
    by_remember = {text for _, text in computed[start:]}
    report_texts = set(chunks.report_chunks(values["final_report"]))
    # The report too, as `finalize` started to check it: the published report has the same
    # pieces, and `remember` computes none of them.
    assert report_texts and report_texts <= {text for _, text in computed[:start]}
    # And the question, the report's first piece: `remember` computes nothing at all.
    assert QUESTION in {text for _, text in computed[:start]} and by_remember == set()
    # Nor does it make the collections' handles (langchain-chroma's import, Chroma's calls).
    assert {REPORTS_COLLECTION, PASSAGES_COLLECTION} <= set(ready)
    # What was prepared is what was stored: every cited page, all its chunks.
    store = await open_store(Location(path=Path(os.environ["MEMORY_DIR"])))
    stored = await store.items(PASSAGES_COLLECTION)
    assert {str(hit.metadata["url"]) for hit in stored} == {page.url for page in pages}
    assert {hit.text for hit in stored} == page_texts


@pytest.mark.usefixtures("world")
async def test_each_research_task_prepares_its_report_before_the_report_is_written(
    monkeypatch: pytest.MonkeyPatch, use_script: Callable[..., ScriptedChatModel]
) -> None:
    order: list[str] = []
    orchestrator = orchestrator_fanning_out("heat pumps in the cold", "heat pump prices")

    def writing(messages: list[BaseMessage]) -> AIMessage:
        reply = orchestrator(messages)
        order.extend([] if reply.tool_calls else ["report"])
        return reply

    use_script(script_for(writing))
    prepared: list[str] = []

    def watched_prepare(given: list[str], sources: list[Source], context: Any) -> None:
        assert context.use_memory and sources
        prepared.extend(given)
        order.append("prepare")  # recorded only: the store is another test's

    monkeypatch.setattr(preparing, "prepare", watched_prepare)

    values, _ = await run(MEMORY_ON)

    results = [m for m in values["messages"] if isinstance(m, ToolMessage) and m.name == "research"]
    assert sorted(prepared) == sorted(m.text for m in results) and len(results) == 2
    assert order == ["prepare", "prepare", "report"]


@pytest.mark.usefixtures("world")
async def test_with_memory_off_nothing_is_prepared_and_no_store_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    memory = tmp_path / "memory"
    monkeypatch.setenv("MEMORY_DIR", str(memory))
    reports: list[str] = []
    real_prepare = preparing.prepare

    def watched_prepare(given: list[str], sources: list[Source], context: Any) -> None:
        reports.extend(given)
        real_prepare(given, sources, context)

    monkeypatch.setattr(preparing, "prepare", watched_prepare)
    ran, _ = watch_target(monkeypatch)

    values, events = await run({**MEMORY_ON, "use_memory": False})

    assert values["final_report"] and reports, "research came back with a report"
    assert ran == []
    assert not memory.exists()
    assert not [e for e in events if e["event"].startswith("memory")]


@pytest.mark.usefixtures("world")
async def test_a_locked_store_leaves_prepare_silent_and_remember_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = Path(os.environ["MEMORY_DIR"])
    ran, raised = watch_target(monkeypatch)
    holder = FileLock(str(memory / LOCK_NAME), timeout=0, thread_local=False)
    holder.acquire()  # another process's lock, as far as this one can tell
    try:
        values, events = await run(MEMORY_ON)
    finally:
        holder.release()

    assert ran == [PREPARE]
    assert [type(error).__name__ for error in raised] == ["MemoryUnavailable"], raised
    assert values["final_report"] and values["citation_check"]["links_kept"] >= 1
    reasons = [e["reason"] for e in events if e.get("status") == "unavailable"]
    assert len(reasons) == 1 and "in use by another process" in reasons[0]
    assert not [e for e in events if e["event"] == "memory_saved"]


@pytest.mark.usefixtures("world")
async def test_a_first_runs_store_is_opened_as_the_run_starts_not_after_the_research(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No store yet: `recall` has nothing to open, yet chromadb's import and the shared
    server's start take seconds; they start with the run, on a thread of their own."""
    monkeypatch.setenv("MEMORY_DIR", str(tmp_path / "memory"))
    order: list[str] = []
    opened: list[tuple[str, object]] = []  # (thread, what the open gave)
    real_open_early = preparing.open_early
    real_prepare = preparing.prepare

    def watched_open_early(location: Any = None) -> None:
        order.append("open")
        assert location is not None and location.path == tmp_path / "memory"
        real_open_early(location)

    def watched_prepare(given: list[str], sources: list[Source], context: Any) -> None:
        order.append("prepare")
        real_prepare(given, sources, context)

    from deep_research.memory import open as opening

    real_blocking = opening.open_store_blocking

    def watched_blocking(*args: Any) -> Any:
        store = real_blocking(*args)
        opened.append((threading.current_thread().name, store))
        return store

    monkeypatch.setattr(preparing, "open_early", watched_open_early)
    monkeypatch.setattr(preparing, "prepare", watched_prepare)
    monkeypatch.setattr(opening, "open_store_blocking", watched_blocking)

    values, events = await run(MEMORY_ON)
    for thread in threading.enumerate():
        if thread.name == "memory-open":
            await asyncio.to_thread(thread.join, 120)

    assert order == ["open", "prepare"]
    assert "memory-open" in [name for name, _ in opened]
    assert len({id(store) for _, store in opened}) == 1, "one store, opened once"
    assert [e for e in events if e["event"] == "memory_saved"]
    assert values["final_report"]
