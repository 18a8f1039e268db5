"""`prepare`: memory's slow work done early, while the run waits for a model.

A research task that comes back with a report starts, on a daemon thread, what `remember`
would otherwise do after publishing: the store's modules are imported and the store opened,
and the pages the report cites are cut into chunks and embedded into the model's cache, so
that `remember` embeds none of them; a report written in parts (`report_in_sections`) has
each part embedded as soon as it is written (`prepare_part`), and `finalize` has the whole
report embedded while it checks it (a report in one call; a report in parts is found
computed), so `remember` embeds none of it but the passes still under way. Nothing here is
state: a page the final report does not cite is never stored, and a process that dies first
loses a cache, not memory. A store that cannot be used is left to `remember`, which meets it
again and names it. On a first run (no store yet: `recall` has nothing to open) `open_early`
opens it as soon as the run starts, so that chromadb's import and the shared server's start
(seconds) are spent while the orchestrator waits for its model, not after a short report.
chromadb is imported only on these threads: `use_memory=false` never touches it.
"""

from __future__ import annotations

import contextvars
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

from deep_research.citations import check_report
from deep_research.config.settings import Context
from deep_research.memory.location import Location
from deep_research.runtime import process
from deep_research.state import Source

log = logging.getLogger(__name__)

PREPARED_PER_PASS = 8  # page chunks `prepare` hands the model's thread at once


def prepare(reports: list[str], sources: list[Source], context: Context) -> None:
    """Embed the pages `reports` cite (among `sources`) on a "memory-prepare" daemon thread;
    nothing with `use_memory` off or no report."""
    if not context.use_memory or not reports:
        return
    # In this run's context: the store knows the thread it opens for, and does not try
    # again a server this thread's run already found unreachable.
    _start(_prepare_quietly, list(reports), list(sources), contextvars.copy_context(), _closes())


def prepare_part(text: str, context: Context, question: str = "") -> None:
    """Embed a part of the final report (a section, or the frame's title, opening and
    conclusion, as soon as it is written, while the other parts still are), or the whole
    report and its `question` as `finalize` starts to check it, on a "memory-prepare" daemon
    thread: `remember` then finds its pieces computed, as the published report holds them
    (`chunks.report_chunks` splits each section on its own). Nothing with `use_memory` off
    or an empty text."""
    if not context.use_memory or not text.strip():
        return
    _start(_prepare_part, text, question)


def open_early(location: Location | None = None) -> None:
    """Open the store on a "memory-open" daemon thread, in this run's context: chromadb's
    import and the start of the directory's shared server take seconds, spent here while
    the orchestrator waits for its model rather than after the report. A store that cannot
    be used is left to `remember`, which meets it again and names it. `location` is the
    store's as the run found it (the thread opens it later, when the environment may have
    moved on)."""
    _start(_open_quietly, contextvars.copy_context(), location, _closes(), name="memory-open")


def _closes() -> int:
    """`open.closes()`, without importing the store's modules here: a process that has not
    imported them has opened, and so closed, no store."""
    opened = sys.modules.get("deep_research.memory.open")
    return opened.closes() if opened is not None else 0


def _open_quietly(context: contextvars.Context, location: Location | None, begun: int) -> None:
    # Once the orchestrator's first request is out: the import then runs while it waits,
    # not while it builds that request.
    process.after_first_model_request()
    from deep_research.memory.open import open_store_blocking

    try:  # not after `close_stores`: the store would be held again, past the close
        context.run(open_store_blocking, location, begun_at=begun)
    except Exception:  # noqa: BLE001, S110  # `remember` opens it again and says what failed
        pass


def _prepare_quietly(
    reports: list[str], sources: list[Source], context: contextvars.Context, begun: int
) -> None:
    try:
        context.run(_prepare, reports, sources, begun)
    except Exception:  # noqa: BLE001, S110  # warmed or not, `remember` does the work and reports
        pass


def _prepare(reports: list[str], sources: list[Source], begun: int | None = None) -> None:
    from deep_research.memory.open import open_store_blocking
    from deep_research.memory.research import (
        PASSAGES_COLLECTION,
        REPORTS_COLLECTION,
        CitedPage,
        page_chunks,
    )

    store = open_store_blocking(begun_at=begun)  # MemoryUnavailable: `remember` meets it
    cited = {s.url: s for report in reports for s in check_report(report, sources).cited}
    # Only what `remember` stores (any other split would be kept, never taken back).
    for page in map(CitedPage.of, cited.values()):
        if page.stored:
            _embed(page_chunks(page))
    # `remember` writes to both; one it cannot make, it meets again and names.
    store.open_collections([REPORTS_COLLECTION, PASSAGES_COLLECTION])


def _embed(pieces: list[str]) -> None:
    """`pieces` into the model's cache, in small background requests: a search scoring its
    results meanwhile (the orchestrator may delegate more research) waits for one at most."""
    from deep_research.embedding import embedder

    model = embedder()
    for start in range(0, len(pieces), PREPARED_PER_PASS):
        model.submit(pieces[start : start + PREPARED_PER_PASS], background=True).result()


def _prepare_part(text: str, question: str) -> None:
    try:
        from deep_research.memory.chunks import report_chunks
        from deep_research.memory.research import stored_question

        # The question first: the report's first piece, and `remember`'s one text not
        # embedded as the report was written.
        asked = [stored_question(question)] if question.strip() else []
        _embed(asked + report_chunks(text))
    except Exception:  # `remember` embeds what it stores, and says what failed
        log.debug("a part of the report was not embedded early", exc_info=True)


def _start(target: Callable[..., None], *args: Any, name: str = "memory-prepare") -> None:
    """`target(*args)` on a daemon thread; a process that cannot start one more thread
    (a container's limit) does the work later, in `remember`, rather than fail the run."""
    try:
        threading.Thread(target=target, args=args, name=name, daemon=True).start()
    except RuntimeError:
        log.debug("memory's early work was not started: no thread", exc_info=True)
