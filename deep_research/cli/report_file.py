"""The report's file: saved under a name that overwrites nothing, and the run record that
says where it went (and what the report file alone does not say).
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import Any

from deep_research.cli.runs import RunSource
from deep_research.cli.summary import report_status
from deep_research.config.settings import ROLES, Context
from deep_research.errors import ReadableError

MAX_NUMBERED = 9999  # `-2` … numbered names tried for one report before giving up


class ReportNameError(ReadableError, FileExistsError):
    """Every name tried for the report is taken."""


def unsourced_note(status: str) -> str:
    """The first lines of a report that is not "complete": opened later from `reports/`,
    alone, it must not read as a confident answer."""
    if status == "complete":
        return ""
    from deep_research.runtime.progress_lines import UNSOURCED

    lack = UNSOURCED.get(status, f"its status is {status!r}")
    return (
        f"> **Note: not a finished report**: {lack}. Nothing in it is backed by a page the "
        "research retrieved: it is the model's own text, unchecked.\n\n"
    )


def save_report(
    reports: Path, question: str, report: str, name: str | None = None, status: str = "complete"
) -> Path:
    """Write `reports/<name>` or `reports/<date>-<slug>.md`, never overwriting a file: one
    that took the name meanwhile keeps it, and the report takes the next `-2`, `-3`… A
    report whose `status` is not "complete" starts with a note saying what it lacks."""
    report = unsourced_note(status) + report
    words = re.sub(r"[^a-z0-9]+", " ", question.lower()).split()[:8]
    first = Path(name or f"{date.today().isoformat()}-{'-'.join(words) or 'report'}.md")
    # A new folder is the user's only; one the user made keeps its mode, each report is 0600.
    reports.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = reports / first
    for n in range(2, MAX_NUMBERED + 2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # fails if it exists
            with open(fd, "w", encoding="utf-8") as file:
                file.write(report)
            return path
        except FileExistsError:
            path = reports / f"{first.stem}-{n}{first.suffix}"
    raise ReportNameError(f"{reports / first} and {MAX_NUMBERED} numbered copies exist")


def finished(
    path: Path,
    values: dict[str, Any],
    context: Context,
    runs: RunSource | None = None,
    thread_id: str = "",
) -> dict[str, Any]:
    """The end record of a run that saved its report: with what an export's footer says
    (the models and the citation check), since the report file holds only the Markdown,
    and the report's status (`complete`, `no_sources`, `unverified`), which `done` alone
    does not tell. A shared run list (`runs`) keeps the report's absolute path: other
    directories read it."""
    models = {role: getattr(context, f"{role}_model") for role in ROLES}
    check = values.get("citation_check")
    where = path.absolute() if runs is not None and runs.shared is not None else path
    end = {"action": "end", "status": "done", "report": str(where), "models": models}
    end["report_status"] = report_status(values, thread_id)
    return end | ({"citation_check": check} if check else {})


def saved_report(runs: RunSource, thread_id: str) -> Path | None:
    """The report a session of this thread saved, as its run records say (the latest), or
    None when none did."""
    records = runs.records(thread_id)
    saved = [r["report"] for r in records if r.get("kind") == "run" and r.get("report")]
    return Path(saved[-1]) if saved else None
