"""`deep-research library add PATH… | list | remove PATH`: your documents as a source.

Each file's outcome is printed as it is indexed (the first one waits for MiniLM to load),
then one line of totals. File names come from disk and are printed through `plain`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from deep_research.cli.args import UsageError
from deep_research.cli.plain import plain
from deep_research.text.wording import plural

if TYPE_CHECKING:
    from rich.console import Console

    from deep_research.library import FileOutcome
    from deep_research.memory import Store

USAGE = "usage: deep-research library add PATH… | library list | library remove PATH"
# The order totals are listed in.
STATUSES = ("added", "updated", "unchanged", "unsupported", "oversized", "skipped", "unreadable")
# A folder of photos would list every one: after this many, unsupported files are only counted.
LISTED_UNSUPPORTED = 10


def path_line(path: object) -> str:
    """A path as one line: a newline in a file name cannot forge a line of the report, and
    a name's bytes that are not UTF-8 are shown as `\\xe9` (printed raw, they would stop
    the batch on a terminal that only takes UTF-8)."""
    text = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text.replace("\n", "\\n").replace("\r", "\\r")


def _usage(message: str) -> UsageError:
    return UsageError(f"{message} (see deep-research --help)")


def library(argv: list[str], console: Console) -> int:
    if not argv or argv[0] not in ("add", "list", "remove"):
        raise _usage(USAGE)
    command, args = argv[0], argv[1:]
    if command == "add" and not args:
        raise _usage("library add needs at least one file or folder")
    if command == "list" and args:
        raise _usage("library list takes no arguments")
    if command == "remove" and len(args) != 1:
        raise _usage("library remove takes one file or folder")
    return asyncio.run(_run(command, args, console))


async def _run(command: str, args: list[str], console: Console) -> int:
    if command == "list":  # from Chroma's catalogue where it can: no chromadb, no model
        return await _list(console)
    from deep_research.memory import open_store

    store = await open_store()  # MemoryUnavailable: one line from main, exit 1
    if command == "add":
        return await _add(store, [Path(arg) for arg in args], console)
    return await _remove(store, Path(args[0]), console)


async def _add(store: Store, paths: list[Path], console: Console) -> int:
    from deep_research.library import add_paths

    console.print(plain(f"Indexing into the library at {store.where} …"))
    done = unsupported = 0

    def show(outcome: FileOutcome) -> None:
        nonlocal done, unsupported
        done += 1
        unsupported += outcome.status == "unsupported"
        if outcome.status == "unsupported" and unsupported > LISTED_UNSUPPORTED:
            return
        detail = f"{plural(outcome.chunks, 'chunk')}" if outcome.chunks else ""
        detail = "; ".join(part for part in (detail, outcome.note) if part)
        line = f"{done:>4}. {outcome.status:<11} {path_line(outcome.path)}"
        console.print(plain(f"{line} ({detail})" if detail else line))

    report = await add_paths(store, paths, show)
    totals = ", ".join(f"{report.count(status)} {status}" for status in STATUSES)
    console.print(plain(f"Done: {totals}."))
    return 1 if report.count("added", "updated", "unchanged") == 0 else 0


async def _list(console: Console) -> int:
    from deep_research.library import entries_of
    from deep_research.memory import LIBRARY_COLLECTION, list_chunks

    chunks = await list_chunks(LIBRARY_COLLECTION)
    listed, where = entries_of(chunks.records), chunks.where
    if not listed:
        console.print(plain(f"The library at {where} is empty: deep-research library add PATH"))
        return 0
    for entry in listed:
        pages = f", {plural(entry.pages, 'page')}" if entry.pages else ""
        size = f"{entry.kind}{pages}, {plural(entry.chunks, 'chunk')}, added {entry.added}"
        console.print(plain(f"{path_line(entry.path)}  ({size})"))
    console.print(plain(f"{plural(len(listed), 'document')} in {where}"))
    return 0


async def _remove(store: Store, path: Path, console: Console) -> int:
    from deep_research.library import remove_path

    gone = await remove_path(store, path)
    if not gone:
        console.print(plain(f"Not in the library: {path_line(path)}"))
        return 1
    for key in gone:
        console.print(plain(f"removed {path_line(key)}"))
    console.print(plain(f"{plural(len(gone), 'document')} removed."))
    return 0
