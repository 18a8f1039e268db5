"""The citation check's entry point: it never raises, and never lets an unchecked link out.

`check_once` edits the report in place, which needs every inline token mapped back into the
document. A report is model output and runs call this unguarded, so Markdown the mapping
cannot handle must not stop a run: it is retried with blank-looking lines emptied, and as a
last resort made inert. Whatever path is taken, the result is parsed again and must hold no
link, image or raw HTML tag that leads or loads anywhere not retrieved.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from typing import Any, cast

from markdown_it.token import Token

from deep_research.citations import html
from deep_research.citations.markdown import parse
from deep_research.citations.registry import RegisteredSource, SourceRegistry
from deep_research.citations.verify import CheckedReport, check_once
from deep_research.errors import DeepResearchError
from deep_research.state import CitationCheck, Source
from deep_research.text.urls import is_citable_url

log = logging.getLogger(__name__)

# An edit can create what a pass removes (unlinking a bare URL can leave `[1]: text`, a new
# reference definition); a pass or two more removes that. More never happened in fuzzing.
MAX_PASSES = 3
# Lines of spaces CommonMark does not count as blank (no-break, ideographic...).
_SPACE_ONLY_LINE = re.compile(r"(?m)^[^\S\n]+$")
# Escaped, these can form no link, image, autolink, raw HTML or reference definition.
_LINK_SYNTAX = re.compile(r"([\\\[\]<])")
_BARE_URL = re.compile(r"(?:[a-z][a-z0-9+.-]*://|mailto:|www\.)[^\s<>\[\]()\"'`\\]*", re.I)
_URL_TRAILER = ".,;:!?*_~'\""
# The counts a later pass adds to; the rest describe the final body, or (fragments) were
# already counted by the first pass, which built what later passes only re-read.
_SUMMED = (
    "fabricated_removed",
    "images_removed",
    "html_removed",
    "fragments_dropped",
    "pdf_fragments_removed",
    "tildes_escaped",
    "headings_fixed",
    "removed_urls",
)


class UnverifiedReportError(DeepResearchError, RuntimeError):
    """Passes kept finding links, images or HTML that lead to pages never retrieved."""


def check_report(markdown: str, sources: Iterable[Source] | SourceRegistry) -> CheckedReport:
    """Verify a report's citations against `sources` and fix its Markdown hygiene."""
    registry = sources if isinstance(sources, SourceRegistry) else SourceRegistry(sources)
    document = markdown.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    for attempt in dict.fromkeys([document, _SPACE_ONLY_LINE.sub("", document)]):
        try:
            return _until_verified(attempt, registry)
        except Exception:  # any failure here would jam the run; the fallbacks are verified
            log.warning("citation check failed on this report; trying a safer form", exc_info=True)
    return inert_report(document, registry)


def _until_verified(document: str, registry: SourceRegistry) -> CheckedReport:
    checked = check_once(document, registry)
    for _ in range(MAX_PASSES - 1):
        if not unverified(checked.body, registry):
            return checked
        checked = _merged(checked, check_once(checked.body, registry))
    if left := unverified(checked.body, registry):
        raise UnverifiedReportError(f"after {MAX_PASSES} passes: {left[:5]}")
    return checked


def _merged(first: CheckedReport, again: CheckedReport) -> CheckedReport:
    earlier: dict[str, Any] = dict(first.check)
    check: dict[str, Any] = dict(again.check)
    check.update({key: earlier[key] + check[key] for key in _SUMMED})
    check["fragments_kept"] = first.check["fragments_kept"]
    check["fragments_built"] = first.check["fragments_built"]
    return CheckedReport(again.body, again.cited, cast(CitationCheck, check))


def unverified(markdown: str, registry: SourceRegistry) -> list[str]:
    """Every link, image or raw HTML tag in `markdown`, as a renderer parses it, that could
    lead or load anywhere not retrieved; empty when the report is safe to publish."""
    found = []
    for token in _rendered(parse(markdown)):
        if token.type == "link_open":
            href = str(token.attrs.get("href", ""))
            if not href.startswith("#") and not _retrieved(href, registry):
                found.append(href)
        elif token.type == "image":
            src = str(token.attrs.get("src", ""))
            if not _retrieved(src, registry):
                found.append(src)
        elif token.type in ("html_inline", "html_block"):
            found.extend(token.content[a:b] for a, b, _ in html.pieces(token.content))
    return found


def _rendered(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        # Not deeper: an image's children are its alt text, which renders as plain text.
        if token.type == "inline":
            yield from token.children or []


def _retrieved(url: str, registry: SourceRegistry) -> bool:
    return is_citable_url(url) and registry.lookup(url) is not None


def inert_report(document: str, registry: SourceRegistry) -> CheckedReport:
    """The last resort: no link survives but a bare URL of a retrieved source.

    Every `[`, `]`, `<` and backslash is escaped and bare URLs of pages never retrieved are
    cut. Code spans then show the backslashes: a price only a parser bug can make anyone
    pay. Should even that parse to something unverified, the text goes in a code block.
    """
    body, kept, removed, cited = _cut_unretrieved(_LINK_SYNTAX.sub(r"\\\1", document), registry)
    try:
        safe = not unverified(body, registry)
    except Exception:  # the parser itself failed: nothing it says can be trusted
        safe = False
    if not safe:
        text, kept, removed, cited = _cut_unretrieved(document, registry)
        fence = "`" * max(3, 1 + max(map(len, re.findall("`+", text)), default=0))
        body = f"{fence}text\n{text}\n{fence}\n"
    check = CitationCheck(
        links_kept=kept,
        fabricated_removed=len(removed),
        fragments_kept=0,
        fragments_built=0,
        fragments_dropped=0,
        pdf_fragments_removed=0,
        images_removed=0,
        html_removed=0,
        tildes_escaped=0,
        headings_fixed=0,
        sources_listed=len(cited),
        removed_urls=removed,
    )
    return CheckedReport(body, cited, check)


def _cut_unretrieved(
    text: str, registry: SourceRegistry
) -> tuple[str, int, list[str], list[RegisteredSource]]:
    """`text` without bare URLs of pages never retrieved; how many stayed, what went, and
    the sources the rest lead to."""
    cited: dict[int, RegisteredSource] = {}
    removed: list[str] = []

    def keep_retrieved(match: re.Match[str]) -> str:
        url = match.group().rstrip(_URL_TRAILER)
        source = registry.lookup(url) if is_citable_url(url) else None
        if source is None:
            removed.append(url)
            return match.group()[len(url) :]
        cited.setdefault(source.number, source)
        return match.group()

    cut = _BARE_URL.sub(keep_retrieved, text)
    return cut, len(_BARE_URL.findall(text)) - len(removed), removed, list(cited.values())
