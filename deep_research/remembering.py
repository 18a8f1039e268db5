"""Where memory enters the graph: `recall` before research, `remember` after publishing.

Both are nodes, so memory is used in code, not left to the model: `recall` finds earlier
reports on similar questions and hands them to the orchestrator (fenced, with their dates);
`remember` stores the published report and every page it cites. A store that cannot be
used (locked by another process, damaged, unreachable) is reported as a progress event,
which the CLI's summary names, and the run goes on without memory. The store is imported
only here, inside the nodes and `prepare`'s thread: chromadb is heavy, and
`use_memory=false` never touches it.
"""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from deep_research import progress
from deep_research.citations import check_report
from deep_research.context import Context, context_of
from deep_research.state import RecalledReport, ResearchState, Source

SHOWN_REPORTS = 3
PREPARED_PER_PASS = 8  # page chunks `prepare` hands the model's thread at once
# What a stored thread id and date may look like when shown outside a data fence: a shared
# or damaged store is outside input like any other.
_THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


async def recall(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Earlier reports similar to this question, for the orchestrator and the user."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    question = last.text if isinstance(last, HumanMessage) else ""
    update: dict[str, Any] = {"question": question, "earlier_reports": []}
    context = context_of(runtime)
    if not context.use_memory:
        return update
    from deep_research.memory import configured, configured_store

    if await asyncio.to_thread(configured_store) is None:
        # Nothing remembered yet: no store to open, and neither chromadb (about 4 s to
        # import) nor the relevance model stands between the question and the first model call.
        where = (await asyncio.to_thread(configured)).describe()
        progress.emit("memory", status="on", where=where, earlier=[])
        return update
    from deep_research.memory import MemoryUnavailable, open_store
    from deep_research.memory.research import similar_reports

    try:
        store = await open_store()
        found = await similar_reports(
            store, question, min_similarity=context.memory_min_similarity, limit=SHOWN_REPORTS
        )
    except MemoryUnavailable as error:
        progress.emit("memory", status="unavailable", reason=str(error))
        return update
    reports = [
        RecalledReport(
            thread_id=r.thread_id if _THREAD_ID.fullmatch(r.thread_id) else "(unnamed)",
            question=r.question,
            date=r.date if _DATE.fullmatch(r.date) else "(undated)",
            similarity=r.similarity,
            excerpt=r.excerpt,
        )
        for r in found
    ]
    progress.emit(
        "memory",
        status="on",
        where=store.where,
        earlier=[{"thread_id": r["thread_id"], "date": r["date"]} for r in reports],
    )
    return {**update, "earlier_reports": reports}


def prepare(state: ResearchState, context: Context) -> None:
    """Research came back and the orchestrator's model is about to write: do `remember`'s
    slow parts now, on a daemon thread, while the run waits for that model.

    The store's modules are imported and the store opened, and the pages the researchers'
    reports cite are cut into chunks and embedded into the model's cache, so that
    `remember` embeds only the report. Nothing here is state: a page the final report
    does not cite is never stored, and a process that dies first loses a cache, not memory.
    """
    if not context.use_memory:
        return
    reports = []
    for message in reversed(state.get("messages") or []):
        if not (isinstance(message, ToolMessage) and message.name == "research"):
            break
        reports.append(message.text)
    if reports:
        sources = list(state.get("sources", []))
        threading.Thread(
            target=_prepare_quietly, args=(reports, sources), name="memory-prepare", daemon=True
        ).start()


def _prepare_quietly(reports: list[str], sources: list[Source]) -> None:
    try:
        _prepare(reports, sources)
    except Exception:  # noqa: BLE001, S110  # warmed or not, `remember` does the work and reports
        pass


def _prepare(reports: list[str], sources: list[Source]) -> None:
    from deep_research.memory.open import open_store_blocking
    from deep_research.memory.research import CitedPage, page_chunks
    from deep_research.search.relevance import embedder

    open_store_blocking()  # MemoryUnavailable: `remember` meets it again and names it
    cited = {s.url: s for report in reports for s in check_report(report, sources).cited}
    model = embedder()
    for source in cited.values():
        page = CitedPage(source.url, source.title, source.texts, source.retrieved_on)
        pieces = page_chunks(page)
        # In small background requests: a search scoring its results meanwhile (the
        # orchestrator may delegate more research) waits for one of them at most.
        for start in range(0, len(pieces), PREPARED_PER_PASS):
            model.submit(pieces[start : start + PREPARED_PER_PASS], background=True).result()


async def remember(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Store the published report and the pages it cites (nothing when use_memory=false)."""
    context = context_of(runtime)
    report = state.get("final_report", "")
    if not context.use_memory or not report.strip():
        return {}
    from deep_research.memory import MemoryUnavailable, open_store
    from deep_research.memory.research import CitedPage
    from deep_research.memory.research import remember as store_report

    # A page recalled from memory keeps its first retrieval date, one read again in this
    # run is this run's (the registry decides, as for the Sources list).
    cited = [
        CitedPage(source.url, source.title, source.texts, source.retrieved_on)
        for source in check_report(report, state.get("sources", [])).cited
    ]
    thread_id = str(get_config().get("configurable", {}).get("thread_id") or "unsaved")
    try:
        store = await open_store()
        pages = await store_report(
            store,
            thread_id=thread_id,
            question=state.get("question", ""),
            report=report,
            cited=cited,
        )
    except MemoryUnavailable as error:
        progress.emit("memory", status="unavailable", reason=str(error))
        return {}
    progress.emit("memory_saved", where=store.where, pages=pages)
    return {}
