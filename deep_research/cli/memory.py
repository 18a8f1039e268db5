"""`deep-research memory`: what past research is remembered, and forgetting it.

    deep-research memory list
    deep-research memory search QUERY
    deep-research memory forget THREAD_ID
    deep-research memory clear --yes
    deep-research memory stop

It opens the memory a run would use (MEMORY_DIR, or the Chroma server at CHROMA_HOST);
`stop` stops the server that shares MEMORY_DIR between your processes, if one runs.
Stored text came from the web and from models: it is printed as plain text, one short
line per item.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from deep_research.cli.args import UsageError
from deep_research.cli.plain import plain
from deep_research.memory import MemoryUnavailable
from deep_research.text.controls import without_controls
from deep_research.text.wording import first_line, plural

if TYPE_CHECKING:
    from rich.console import Console

    from deep_research.memory import Store

USAGE = "usage: deep-research memory list | search QUERY | forget THREAD_ID | clear --yes | stop"
SHOWN = 5
LINE_CHARS = 70


def memory_command(argv: list[str], console: Console) -> int:
    """Run one `memory` subcommand; 1 when the memory cannot be used or holds nothing asked."""
    if not argv or argv[0] not in ("list", "search", "forget", "clear", "stop"):
        raise UsageError(USAGE)
    command, rest = argv[0], argv[1:]
    wanted = {"list": 0, "search": 1, "forget": 1, "clear": 1, "stop": 0}[command]
    if len(rest) != wanted or (command == "clear" and rest != ["--yes"]):
        hint = " (clear forgets every report and passage: confirm with --yes)"
        raise UsageError(USAGE + (hint if command == "clear" else ""))
    try:
        return asyncio.run(_run(command, rest, console))
    except MemoryUnavailable as error:
        print(f"deep-research: {without_controls(error)}", file=sys.stderr)
        return 1


async def _run(command: str, rest: list[str], console: Console) -> int:
    say = console.print
    if command == "list":  # from Chroma's catalogue where it can: no chromadb, no model
        from deep_research.memory.listing import remembered_reports

        where, reports = await remembered_reports()
        say(plain(f"Memory at {where}: {plural(len(reports), 'report')}"))
        for report in reports:
            line = f"{report.date}  {report.thread:<36}  {first_line(report.question, LINE_CHARS)}"
            say(plain(line + _earlier(report.earlier)))
        return 0
    if command == "stop":  # no chromadb either: a signal to the keeper
        return await asyncio.to_thread(_stop, console)
    # chromadb (seconds to import) and, for search, the model: only for these commands.
    from deep_research.memory import PASSAGES_COLLECTION, REPORTS_COLLECTION, open_store
    from deep_research.memory.research import forget

    store = await open_store()
    if command == "search":
        await _search(store, rest[0], console)
        return 0
    if command == "forget":
        gone = await forget(store, rest[0])
        if not gone:
            say(plain(f"Nothing remembered for thread {first_line(rest[0], LINE_CHARS)}."))
            return 1
        say(plain(f"Forgot thread {rest[0]} ({plural(gone, 'stored chunk')})."))
        return 0
    for collection in (REPORTS_COLLECTION, PASSAGES_COLLECTION):
        await store.clear(collection)
    say(plain(f"Memory at {store.where} cleared: every report and passage is forgotten."))
    return 0


def _stop(console: Console) -> int:
    from deep_research.memory import configured
    from deep_research.memory.sharing import stop

    location = configured()
    if location.path is None:
        console.print(plain(f"Memory is on {location.describe()}: it is not ours to stop."))
        return 1
    stopped = stop(location.path)
    if stopped is None:
        console.print(plain(f"No memory server runs for {location.path}."))
        return 0
    console.print(plain(f"Stopped the memory server for {location.path} ({stopped.describe()})."))
    return 0


def _earlier(threads: tuple[str, ...]) -> str:
    """A rerun's report replaced the earlier ones on its question: which threads they were."""
    if not threads:
        return ""
    shown = ", ".join(first_line(t, 36) for t in threads[:3])
    more = f" and {len(threads) - 3} more" if len(threads) > 3 else ""
    return f"  (also researched in {shown}{more})"


async def _search(store: Store, query: str, console: Console) -> None:
    from deep_research.memory import PASSAGES_COLLECTION, REPORTS_COLLECTION

    reports: dict[str, tuple[float, str]] = {}
    for hit in await store.query(REPORTS_COLLECTION, query, k=40):
        thread = str(hit.metadata.get("thread", ""))
        if thread not in reports:
            label = f"{hit.metadata.get('date')}  thread {thread}  {hit.metadata.get('question')}"
            reports[thread] = (hit.similarity, label)
    console.print(plain("Reports:"))
    for similarity, label in list(reports.values())[:SHOWN]:
        console.print(plain(f"  {similarity:.2f}  {first_line(label, LINE_CHARS + 40)}"))
    pages: dict[str, str] = {}
    for hit in await store.query(PASSAGES_COLLECTION, query, k=40):
        url = str(hit.metadata.get("url", ""))
        if url not in pages:
            retrieved = hit.metadata.get("retrieved")
            pages[url] = f"{hit.similarity:.2f}  {retrieved}  {first_line(url, LINE_CHARS + 40)}"
    console.print(plain("Passages:"))
    for line in list(pages.values())[:SHOWN]:
        console.print(plain(f"  {line}"))
