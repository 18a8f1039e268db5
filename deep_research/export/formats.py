"""A report in HTML, PDF or Word: read it, check its size, render it, write the file.

One path for every face (the CLI's `export` command and `--export`, the MCP tool, Python):
Markdown → the safe HTML page (`html.report_html`) → WeasyPrint's PDF or pandoc's Word
file. A report larger than `limits.EXPORT_CHARS` is refused before any work is done, and
the rendering runs in a child process bounded in time and memory (`bounded`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Literal, get_args

from deep_research.errors import DeepResearchError
from deep_research.export.bounded import (
    NO_MEMORY,
    READABLE,
    UNAVAILABLE,
    ExportError,
    cap_memory,
    render_in_child,
)
from deep_research.export.html import report_html
from deep_research.export.needs import ExportUnavailableError, require
from deep_research.export.report import ReportInfo
from deep_research.text.limits import EXPORT_CHARS

Format = Literal["html", "pdf", "docx"]
FORMATS: tuple[Format, ...] = get_args(Format)
MEDIA_TYPES: dict[Format, str] = {
    "html": "text/html",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
# What each format needs beyond the core install (needs.py), checked before a long run.
_NEEDS: dict[Format, tuple[str, str]] = {"pdf": ("weasyprint", "PDF"), "docx": ("pypandoc", "Word")}


def check_format(name: str) -> Format:
    """`name` as a `Format`, or an `ExportError` listing the formats."""
    for known in FORMATS:
        if name.strip().lower() == known:
            return known
    raise ExportError(f"unknown export format {name!r}: use one of {', '.join(FORMATS)}")


def check_available(to: Format) -> None:
    """Raise `ExportUnavailableError` now if `to` needs a package that is missing."""
    if to in _NEEDS:
        require(*_NEEDS[to])


def render(markdown: str, to: Format, info: ReportInfo | None = None) -> bytes:
    """The report's Markdown as the bytes of an HTML, PDF or .docx file, made in a child
    process under `bounded.EXPORT_SECONDS` and `EXPORT_MEMORY_MB` (`ExportLimitError`)."""
    to = check_format(to)
    check_size(markdown)
    return render_in_child(markdown, to, info or ReportInfo())


def draw(markdown: str, to: Format, info: ReportInfo) -> bytes:
    """What `render` returns, made in this process, unbounded: the child's work."""
    # NUL is no character a document may hold (lxml and Word refuse it); show it replaced.
    markdown = markdown.replace("\0", "\ufffd")
    if to == "docx":
        from deep_research.export.docx import docx_bytes

        return docx_bytes(report_html(markdown, info, title_heading=False))
    page = report_html(markdown, info)
    if to == "pdf":
        from deep_research.export.pdf import pdf_bytes

        return pdf_bytes(page)
    return page.encode("utf-8")


def child(memory_mb: str) -> int:
    """The child's work: the request from stdin, the file to stdout; the exit code says how."""
    cap_memory(int(memory_mb))  # before WeasyPrint and Pango load: they count too
    try:
        given = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        facts = given["info"]
        facts["library"] = frozenset(facts.get("library") or ())
        data = draw(given["markdown"], given["to"], ReportInfo(**facts))
    except MemoryError:
        return NO_MEMORY
    except DeepResearchError as error:  # pandoc's failure, a missing package: one line
        print(str(error).replace("\n", " "), file=sys.stderr)
        return UNAVAILABLE if isinstance(error, ExportUnavailableError) else READABLE
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def export(
    report: Path | str, to: Format, out: Path | None = None, info: ReportInfo | None = None
) -> Path:
    """Write the report (a `Path` to its Markdown file, or the Markdown as a `str`) as `to`.

    The file goes to `out`, or beside a report file with the format's suffix."""
    if isinstance(report, Path):
        markdown = read_report(report)
        out = out or report.with_suffix(f".{check_format(to)}")
    else:
        markdown = report
        if out is None:
            raise ExportError("give out=PATH: a report passed as text has no file to sit beside")
    data = render(markdown, to, info)
    out.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # 0600 like the report beside it: what it says is the user's only (umask can only narrow).
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "wb") as file:
        file.write(data)
    return out


def read_report(path: Path) -> str:
    """A report file's text (bad UTF-8 shown replaced), refused when too large to export."""
    try:
        # UTF-8 is at most 4 bytes a character: a larger file is over the limit unread.
        if path.stat().st_size > 4 * EXPORT_CHARS:
            raise ExportError(_too_large(f"{path} is {path.stat().st_size:,} bytes"))
        text = path.read_bytes().decode("utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, PermissionError) as error:
        raise ExportError(f"cannot read the report {path}: {error.strerror}") from None
    check_size(text)
    return text


def check_size(markdown: str) -> None:
    if len(markdown) > EXPORT_CHARS:
        raise ExportError(_too_large(f"the report is {len(markdown):,} characters"))


def _too_large(what: str) -> str:
    return (
        f"{what}; exports take reports of up to {EXPORT_CHARS:,} characters "
        "(a long research report is under 100,000): cut it, or export the parts"
    )
