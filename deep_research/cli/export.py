"""`deep-research export REPORT.md --to html|pdf|docx [--out PATH]`, and `--export` on a run.

The report file holds only the Markdown; the footer's facts (question, thread, models,
searches, the citation check) come from the traffic log of the run that saved it, found
by the report path its end record names. A report written elsewhere exports with what
the file itself holds. A `file:` link stays a link only to a document of the user's
library (`library list`); any other file is exported as text.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deep_research.cli.args import HOME, Parser, UsageError
from deep_research.cli.counts import totals
from deep_research.cli.plain import plain
from deep_research.cli.runs import Home, list_runs

if TYPE_CHECKING:
    from rich.console import Console

    from deep_research.export import Format, ReportInfo

FORMATS = ("html", "pdf", "docx")  # deep_research.export.FORMATS, without importing it


def export_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="deep-research export",
        description="Write a saved report as HTML, PDF or Word, its citations still links.",
    )
    parser.add_argument("report", type=Path, help="the report's Markdown file (reports/*.md)")
    parser.add_argument("--to", required=True, choices=FORMATS, help="the file format")
    parser.add_argument("--out", type=Path, help="where to write it (default: beside REPORT)")
    return parser


def export_command(argv: list[str], console: Console) -> int:
    args = export_parser().parse_args(argv)
    from deep_research.export import export

    if not args.report.is_file():
        raise UsageError(f"no report at {args.report}")
    path = export(args.report, args.to, args.out, full_info(args.report, console))
    console.print(plain(f"Exported: {path}"))
    return 0


def export_formats(text: str) -> list[Format]:
    """`--export html,pdf`: each format once, in order; every one installed, or an error now
    (before a run of minutes, not after it)."""
    from deep_research.export import ExportError, check_available, check_format

    try:
        formats = list(dict.fromkeys(check_format(name) for name in text.split(",")))
    except ExportError as error:
        raise UsageError(f"--export: {error}") from None
    for name in formats:
        check_available(name)
    return formats


def export_beside(report: Path, formats: list[Format], console: Console) -> None:
    """Each format written beside the run's saved report."""
    from deep_research.export import export

    info = full_info(report, console)
    for name in formats:
        out = free_beside(report, name)
        console.print(plain(f"Exported: {export(report, name, out=out, info=info)}"))


def free_beside(report: Path, to: str) -> Path:
    """The report's name with `to`'s suffix, or `-2`, `-3`… when that is taken: an export
    never replaces a file (the report itself included: `--out notes.html --export html`)."""
    for n in range(1, 10_000):
        stem = report.stem if n == 1 else f"{report.stem}-{n}"
        candidate = report.with_name(f"{stem}.{to}")
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
    raise UsageError(f"no free name for the {to} export beside {report}")


def full_info(report: Path, console: Console) -> ReportInfo:
    """What the run knew (`info_for`) and the library's documents a link may open."""
    return dataclasses.replace(info_for(HOME, report), library=library_documents(report, console))


def library_documents(report: Path, console: Console) -> frozenset[str]:
    """The paths of the library's documents, asked only of a report that links a file."""
    try:
        if b"file:" not in report.read_bytes().lower():
            return frozenset()
    except OSError:  # export() says why it cannot read the report
        return frozenset()
    from deep_research.library import entries_of
    from deep_research.memory import LIBRARY_COLLECTION, MemoryUnavailable, list_chunks

    try:
        chunks = asyncio.run(list_chunks(LIBRARY_COLLECTION))
    except MemoryUnavailable as error:
        console.print(
            plain(f"Library links exported as text: the library is unavailable ({error})")
        )
        return frozenset()
    return frozenset(entry.path for entry in entries_of(chunks.records))


def info_for(home: Home, report: Path) -> ReportInfo:
    """What the run that saved `report` knew, from its traffic log (latest run first)."""
    from deep_research.export import ReportInfo

    target = report.resolve()
    for run in reversed(list_runs(home)):
        if run.report and Path(run.report).resolve() == target:
            records = home.runs().records(run.thread_id)
            return _from_log(run.thread_id, run.question, records)
    return ReportInfo()


def _from_log(thread_id: str, question: str, records: list[dict[str, Any]]) -> ReportInfo:
    from deep_research.export import ReportInfo

    ends = [r for r in records if r.get("kind") == "run" and r.get("report")]
    end = ends[-1] if ends else {}
    models, check = end.get("models"), end.get("citation_check")
    return ReportInfo(
        question=question,
        date=date.fromtimestamp(end["t"]).isoformat() if end else "",
        thread_id=thread_id,
        # A log is read tolerantly (cli/runs.py): a field of the wrong shape is left out.
        models={str(k): str(v) for k, v in models.items()} if isinstance(models, dict) else {},
        searches=totals(records).searches,
        citation_check=check if isinstance(check, dict) else None,
    )
