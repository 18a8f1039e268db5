"""`recall`: before research, earlier reports on similar questions, from memory.

Memory is used in code, not left to the model: the reports found go to the orchestrator
fenced and dated, their thread ids to the user, and the pages they cited to the run's
sources, as read (`memory.pages`), so a rerun can cite what they cited; research from the
library alone is shown only reports made from the library alone, and the user is told so. A
store that cannot be used (locked, damaged, unreachable) is a progress event the CLI's
summary names, and the run goes on without memory. chromadb is imported only inside the
node, and only when a store exists.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.config.settings import Context, context_of
from deep_research.runtime import progress
from deep_research.state import RecalledReport, ResearchState, Source
from deep_research.text import limits

if TYPE_CHECKING:
    from deep_research.memory import Store
    from deep_research.memory.earlier import EarlierReport

SHOWN_REPORTS = 3
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
    from deep_research.memory import configured, open_early
    from deep_research.memory.listing import nothing_remembered

    location = await asyncio.to_thread(configured)
    if await asyncio.to_thread(nothing_remembered, location):
        # Nothing remembered yet: no report to recall, and neither chromadb (about 4 s to
        # import) nor the relevance model stands between the question and the first model
        # call. The store is opened meanwhile, for the pages prepared for `remember`.
        open_early(location)
        progress.emit("memory", status="on", where=location.describe(), earlier=[])
        return update
    from deep_research.memory import MemoryUnavailable, open_store
    from deep_research.memory.earlier import similar_reports

    # Research promised to use the user's documents alone is shown no report that used the web.
    library_only = context.search_provider == LIBRARY_PROVIDER
    try:
        store = await open_store()
        found = await similar_reports(
            store,
            question,
            min_similarity=context.memory_min_similarity,
            limit=SHOWN_REPORTS,
            library_only=library_only,
        )
        pages = [] if library_only else await _cited(store, found, context)
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
        library_only=library_only,
    )
    return {**update, "earlier_reports": reports, "sources": pages}


async def _cited(store: Store, found: list[EarlierReport], context: Context) -> list[Source]:
    """The pages the recalled reports cited, as read (with their first retrieval date): a
    rerun that says again what they said cites what they cited. None when memory may not
    answer for the web (`memory_max_age_days` 0)."""
    if context.memory_max_age_days <= 0:
        return []
    from deep_research.memory.pages import cited_pages

    asked = {url: report.question for report in found for url in report.pages}
    pages = await cited_pages(store, list(asked), max_age_days=context.memory_max_age_days)
    sources = []
    for page in pages:
        source = Source(
            url=page.url,
            title=page.title,
            content=page.text,
            found_by=limits.cut(asked[page.url], limits.PLAN_ITEM_CHARS),
            retrieved=page.retrieved,
        )
        if page.pdf_page:  # stored as a web PDF's page: cited at that page
            source["pdf_page"] = page.pdf_page
        sources.append(source)
    return sources
