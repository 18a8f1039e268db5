"""`remember`: after publishing, the report and every page it cites go into memory.

Only a finished report (`status` "complete": it cites a page the research retrieved) is
remembered. One that cites nothing would be recalled as research ("You researched a
similar question") with nothing in it, and would replace the earlier, sourced report on
its question; it is left out, and a `memory_skipped` event says why.

`prepare` does the slow part early: when research comes back, a daemon thread opens the
store and embeds the cited pages while the model writes the report, so `remember` embeds
only the report. A store that cannot be used is a progress event and the run goes on.
chromadb is imported only inside these functions: `use_memory=false` never touches it.
"""

from __future__ import annotations

import contextvars
import threading
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from deep_research.citations import check_report
from deep_research.config.settings import Context, context_of
from deep_research.runtime import progress
from deep_research.state import ResearchState, Source

PREPARED_PER_PASS = 8  # page chunks `prepare` hands the model's thread at once


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
        # In this run's context: the store knows the thread it opens for, and does not try
        # again a server this thread's run already found unreachable.
        threading.Thread(
            target=_prepare_quietly,
            args=(reports, sources, contextvars.copy_context()),
            name="memory-prepare",
            daemon=True,
        ).start()


def _prepare_quietly(
    reports: list[str], sources: list[Source], context: contextvars.Context
) -> None:
    try:
        context.run(_prepare, reports, sources)
    except Exception:  # noqa: BLE001, S110  # warmed or not, `remember` does the work and reports
        pass


def _prepare(reports: list[str], sources: list[Source]) -> None:
    from deep_research.embedding import embedder
    from deep_research.memory.open import open_store_blocking
    from deep_research.memory.research import CitedPage, page_chunks

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
    sources = check_report(report, state.get("sources", [])).cited
    status = state["status"]  # `finalize` sets it with the report
    if status != "complete":
        progress.emit("memory_skipped", status=status)
        return {}
    cited = [CitedPage(s.url, s.title, s.texts, s.retrieved_on) for s in sources]
    thread_id = str(get_config().get("configurable", {}).get("thread_id") or "unsaved")
    try:
        store = await open_store()
        pages = await store_report(
            store,
            thread_id=thread_id,
            question=state.get("question", ""),
            report=report,
            cited=cited,
            search_provider=context.search_provider,
        )
    except MemoryUnavailable as error:
        progress.emit("memory", status="unavailable", reason=str(error))
        return {}
    progress.emit("memory_saved", where=store.where, pages=pages)
    return {}
