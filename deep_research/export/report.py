"""What an export says about its report beyond the Markdown: the title and the footer.

A saved report is the Markdown alone; the run that wrote it knows the rest (its question,
thread, models, searches and the citation check's counts). Whoever holds that run (the
CLI's traffic log, the MCP tool's finished run) fills a `ReportInfo`; every field may be
missing, and the footer then says only what is known. `library` names the documents of
the user's library a `file:` link may open (the CLI's library listing, the MCP run's
sources); a `file:` link to anything else is exported as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt

from deep_research.text.urls import is_file_url
from deep_research.text.wording import one_line, plural

TITLE_CHARS = 300  # a title is a line, whatever the question or heading held


@dataclass(frozen=True)
class ReportInfo:
    """The run behind a report, as far as it is known."""

    question: str = ""
    date: str = ""  # ISO date the report was written
    thread_id: str = ""
    models: Mapping[str, str] = field(default_factory=dict)  # role -> "provider:model"
    searches: int | None = None
    citation_check: Mapping[str, Any] | None = None  # `CitationCheck` from `finalize`
    library: frozenset[str] = frozenset()  # absolute paths of the library's documents

    def footer_lines(self) -> list[str]:
        """Short plain lines for the end of the document (no Markdown, no HTML)."""
        lines = []
        written = [f"Written {self.date}" if self.date else "", self._thread()]
        if line := " · ".join(part for part in written if part):
            lines.append(line)
        if self.models:
            models = ", ".join(f"{role} {spec}" for role, spec in sorted(self.models.items()))
            lines.append(f"Models: {models}")
        if self.searches is not None:
            lines.append(f"Searches: {self.searches}")
        if line := self._citations():
            lines.append(line)
        lines.append("Exported by deep_research")
        return [one_line(line, 500) for line in lines]

    def _thread(self) -> str:
        return f"thread {self.thread_id}" if self.thread_id else ""

    def _citations(self) -> str:
        check = self.citation_check
        if not check:
            return ""
        try:
            fragments = int(check.get("fragments_kept", 0)) + int(check.get("fragments_built", 0))
            return (
                f"Citation check: {plural(int(check.get('links_kept', 0)), 'link')} kept, "
                f"{int(check.get('fabricated_removed', 0))} removed (never retrieved); "
                f"{plural(fragments, 'text fragment')} kept, "
                f"{int(check.get('fragments_dropped', 0))} dropped"
            )
        except (TypeError, ValueError):  # a hand-edited log: say nothing rather than guess
            return ""


def library_paths(urls: Iterable[object]) -> frozenset[str]:
    """The absolute paths the `file:///…` URLs among `urls` name (a library source's URL,
    `search.library.document_url`); anything else is left out."""
    return frozenset(
        unquote(urlsplit(url.strip()).path)
        for url in urls
        if isinstance(url, str) and is_file_url(url)
    )


def title_of(markdown: str, info: ReportInfo) -> tuple[str, bool]:
    """The document's title, and whether the report's own first line already shows it.

    The question is the title; a report that opens with a `# ` heading keeps that heading
    as its visible title (and the question, if given, names the file's metadata)."""
    heading = _first_heading(markdown)
    title = info.question.strip() or heading or "Research report"
    return one_line(title, TITLE_CHARS), bool(heading)


def _first_heading(markdown: str) -> str:
    """The text of a level-1 heading on the report's first non-blank line, if any."""
    first = next((line for line in markdown.splitlines() if line.strip()), "")
    if not first.lstrip().startswith("#"):
        return ""
    tokens = MarkdownIt("commonmark").parse(first)
    if len(tokens) < 2 or tokens[0].type != "heading_open" or tokens[0].tag != "h1":
        return ""
    inline = tokens[1].children or []
    return "".join(t.content for t in inline if t.type in ("text", "code_inline")).strip()
