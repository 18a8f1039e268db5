"""`remember`: after publishing, the report and every page it cites go into memory.

Only a finished report (`status` "complete": it cites a page the research retrieved) is
remembered. One that cites nothing would be recalled as research ("You researched a
similar question") with nothing in it, and would replace the earlier, sourced report on
its question; it is left out, and a `memory_skipped` event says why.

The slow part is done early by `memory.prepare`: each research task that comes back starts
a daemon thread that opens the store and embeds the pages its report cites while the run
goes on, and the report is embedded as it is written and checked (`memory.prepare_part`).
A store that cannot be used is a progress event and the run goes on. chromadb is imported
only inside this function: `use_memory=false` never touches it.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime

from deep_research.citations import check_report
from deep_research.config.settings import Context, context_of
from deep_research.runtime import progress
from deep_research.state import ResearchState


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
    cited = [CitedPage.of(source) for source in sources]
    thread_id = str(get_config().get("configurable", {}).get("thread_id") or "unsaved")
    # Seconds on a first run (the store opened, the pages embedded): said, not a silent wait.
    progress.emit("memory_saving", pages=len(cited))
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
