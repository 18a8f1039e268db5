"""Citation verification: every link must lead to a retrieved source, every fragment to
a passage really in its retrieved text, and nothing may load a URL that was not retrieved.
The report is edited in place, not re-rendered, so everything the model wrote that is not a
citation problem stays byte for byte.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from deep_research.citations import html
from deep_research.citations.fragments import (
    FragmentError,
    TextDirective,
    directive_from_quote,
    fragment_of,
    parse_directives,
)
from deep_research.citations.hygiene import (
    citation_cuts,
    escape_label,
    link_destination,
    model_sources_section,
    numbered_prefix,
    source_label,
    sources_section,
    stray_tildes,
)
from deep_research.citations.markdown import Inline, Link, SourceMap, describe_inline, parse
from deep_research.citations.registry import RegisteredSource, SourceRegistry
from deep_research.state import CitationCheck, ReportStatus
from deep_research.text.urls import (
    DIRECTIVE_DELIMITER,
    is_citable_url,
    is_web_url,
    split_fragment,
)

EMPTIED = "(link removed: not a retrieved source)"
HTML_EMPTIED = "(HTML removed)"
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


@dataclass
class CheckedReport:
    """A verified report body, the sources it cites (in order of first citation), the counts."""

    body: str
    cited: list[RegisteredSource]
    check: CitationCheck

    @property
    def status(self) -> ReportStatus:
        """Whether the report rests on retrieved pages (see `state.ReportStatus`)."""
        if self.cited:
            return "complete"
        # A removed image or HTML link is not a claim's citation; a removed link is.
        return "unverified" if self.check["fabricated_removed"] else "no_sources"

    def render(self, appendix: str = "", today: str = "", language: str = "en") -> str:
        """The report as the reader gets it; `appendix` goes before the Sources section, whose
        pages read in this run are dated `today`, headed in the report's `language`."""
        # Only blank lines and trailing whitespace go: leading indentation makes a code block
        # and trailing Unicode spaces can void a reference definition, and either change,
        # made after the check, could turn checked text into an unchecked link.
        body = _LEADING_BLANK_LINES.sub("", self.body).rstrip(" \t\n")
        parts = [body, appendix.strip(), sources_section(self.cited, language, today)]
        return "\n\n".join(part for part in parts if part) + "\n"


@dataclass
class _Verifier:
    registry: SourceRegistry
    counts: Counter[str] = field(default_factory=Counter)
    cited: dict[int, RegisteredSource] = field(default_factory=dict)
    removed_urls: list[str] = field(default_factory=list)
    gone_elements: set[str] = field(default_factory=set)  # see html.replacement
    cuts: dict[int, tuple[int, int]] = field(default_factory=dict)  # the inline's, see _remove

    def link_edits(self, inline: Inline, link: Link) -> list[Edit]:
        if link.href.startswith("#"):  # a jump within the report, not a citation
            return []
        source = self.retrieved(link.href)
        if source is None:
            return self._remove(inline, link)
        self.counts["links_kept"] += 1
        self.cited.setdefault(source.number, source)
        url = source.url
        fragment = self._fragment(link, source)
        if "#" in url:  # a PDF's page: its `#page=N` is the fragment
            fragment = ""
        destination = link_destination(f"{url}#{fragment}" if fragment else url)
        if link.kind in ("autolink", "bare"):
            return [Edit(link.start, link.end, f"[{source_label(source.title)}]({destination})")]
        tail = f"]({destination})"
        if inline.source[link.label_end : link.end] == tail:
            return []
        return [Edit(link.label_end, link.end, tail)]

    def unlinked(self, link: Link) -> bool:
        """Whether `link_edits` will remove this link (it leads to no retrieved page)."""
        return not link.href.startswith("#") and self.retrieved(link.href) is None

    def retrieved(self, url: str) -> RegisteredSource | None:
        return self.registry.lookup(url) if is_citable_url(url) else None

    def image_edits(self, image: Link) -> list[Edit]:
        """An image loads without a click, so its URL can carry data out: only a retrieved
        source may be shown; any other becomes its description."""
        if self.retrieved(image.href):
            return []
        self.counts["images_removed"] += 1
        self.removed_urls.append(image.href)
        return [Edit(image.start, image.end, escape_label(image.alt))]

    def html_edits(self, raw: str, offset: int) -> list[Edit]:
        """Edits for raw HTML found at `offset`: see html.py for what goes and what stays."""
        edits = []
        for start, end, text in html.pieces(raw, self.gone_elements):
            tag = raw[start:end]
            self.counts["html_removed"] += 1
            url = html.target(tag)
            if url is not None and not url.startswith("#") and not self.retrieved(url):
                self.removed_urls.append(url)
                if html.is_link_tag(tag):  # a citation in HTML form, of a page never retrieved
                    self.counts["fabricated_removed"] += 1
            edits.append(Edit(offset + start, offset + end, text))
        return edits

    def html_block_edits(self, document: str, start: int, end: int, content: str) -> list[Edit]:
        edits = self.html_edits(document[start:end], start)
        if edits and not html.neutralised(content, set(self.gone_elements)).strip():
            # As with an emptied paragraph: a vanished block could change how later lines parse.
            edits[0] = Edit(edits[0].start, edits[0].end, HTML_EMPTIED)
        return edits

    def _remove(self, inline: Inline, link: Link) -> list[Edit]:
        """Unlink a citation of a page never retrieved; the claim text stays."""
        self.counts["fabricated_removed"] += 1
        self.removed_urls.append(link.href)
        if (cut := self.cuts.get(link.start)) is not None:
            return [Edit(*cut, "")]  # a pointer, not words of the sentence (`citation_cuts`)
        label = inline.source[slice(*link.label)].strip()
        if link.kind in ("autolink", "bare") or not label or is_web_url(label):
            return [Edit(link.start, link.end, "")]  # the "claim" would be the URL itself
        return [Edit(link.start, link.start + 1, ""), Edit(link.label_end, link.end, "")]

    def _fragment(self, link: Link, source: RegisteredSource) -> str:
        """The fragment the verified link carries: checked, rebuilt, or dropped."""
        anchor, _, directive_part = split_fragment(link.href)[1].partition(DIRECTIVE_DELIMITER)
        quoted = not directive_part and bool(link.title.strip())
        try:
            wanted = (
                parse_directives(directive_part)
                if directive_part
                else [d for d in [directive_from_quote(link.title)] if d]
            )
        except FragmentError:
            self.counts["fragments_dropped"] += 1
            return anchor
        if not wanted:
            return anchor
        if source.is_pdf:
            self.counts["pdf_fragments_removed"] += 1
            return anchor
        spans = [source.retrieved.locate(directive) for directive in wanted]
        found = [span for span in spans if span is not None]
        if len(found) < len(spans):
            self.counts["fragments_dropped"] += 1
            return anchor
        built: list[TextDirective] = [source.retrieved.directive_for(*span) for span in found]
        self.counts["fragments_built" if quoted else "fragments_kept"] += 1
        return anchor + fragment_of(built)

    def tilde_edits(self, inline: Inline) -> list[Edit]:
        offsets = stray_tildes(inline)
        self.counts["tildes_escaped"] += len(offsets)
        return [Edit(offset, offset + 1, "\\~") for offset in offsets]

    def summary(self) -> CitationCheck:
        return CitationCheck(
            links_kept=self.counts["links_kept"],
            fabricated_removed=self.counts["fabricated_removed"],
            fragments_kept=self.counts["fragments_kept"],
            fragments_built=self.counts["fragments_built"],
            fragments_dropped=self.counts["fragments_dropped"],
            pdf_fragments_removed=self.counts["pdf_fragments_removed"],
            images_removed=self.counts["images_removed"],
            html_removed=self.counts["html_removed"],
            tildes_escaped=self.counts["tildes_escaped"],
            headings_fixed=self.counts["headings_fixed"],
            sources_listed=len(self.cited),
            removed_urls=list(self.removed_urls),
        )


def check_once(document: str, registry: SourceRegistry) -> CheckedReport:
    """One pass over a report: verify its citations and fix its Markdown hygiene.

    May raise on Markdown it cannot map back to the document; `check_report` (safety.py)
    is the entry point that never does.
    """
    tokens = parse(document)
    source_map = SourceMap(document)
    verifier = _Verifier(registry)
    edits: list[Edit] = []
    skipped: list[range] = []
    if (first := model_sources_section(tokens)) is not None:
        skipped.append(range(first, len(source_map.lines)))
        edits.append(Edit(*source_map.line_span(first, len(source_map.lines)), ""))
    for index, token in enumerate(tokens):
        if any(token.map and token.map[0] in r for r in skipped):
            continue
        if token.type == "html_block" and token.map:
            span = source_map.line_span(*token.map)
            edits.extend(verifier.html_block_edits(document, *span, token.content))
        if token.type != "inline":
            continue
        inline = describe_inline(token)
        local = verifier.tilde_edits(inline)
        if index and tokens[index - 1].type == "heading_open":
            if cut := numbered_prefix(inline.source):
                verifier.counts["headings_fixed"] += 1
                local.append(Edit(0, cut, ""))
        verifier.cuts = citation_cuts(inline, verifier.unlinked)
        for link in inline.links:
            local.extend(verifier.link_edits(inline, link))
        for image in inline.images:
            local.extend(verifier.image_edits(image))
        for start, end in inline.html:
            local.extend(verifier.html_edits(inline.source[start:end], start))
        local = _outside(local, verifier.cuts.values())
        if local and not _apply(inline.source, local).strip():
            # An emptied paragraph would vanish and could change how the lines after it
            # parse (an indented block after it would join a list above, say).
            local = [Edit(0, len(inline.source), EMPTIED)]
        # Mapped even without edits: table cells share a line, and each one moves the
        # line's cursor past itself.
        to_document = source_map.mapper(token)
        edits.extend(Edit(to_document(e.start), to_document(e.end), e.text) for e in local)
    body = _apply(document, edits)
    return CheckedReport(body, list(verifier.cited.values()), verifier.summary())


def _outside(edits: list[Edit], cuts: Iterable[tuple[int, int]]) -> list[Edit]:
    """`edits` without those inside a cut (a tilde in a label that goes with its link), which
    would shift the text under it. Cuts never overlap, so one bisection finds the candidate."""
    spans = sorted((start, end) for start, end in cuts if end > start)
    if not spans:
        return edits
    starts = [start for start, _ in spans]
    kept = []
    for edit in edits:
        index = bisect_right(starts, edit.start) - 1
        start, end = spans[index] if index >= 0 else (0, -1)
        inside = start <= edit.start and edit.end <= end and (start, end) != (edit.start, edit.end)
        if not inside:
            kept.append(edit)
    return kept


def _apply(document: str, edits: list[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        document = document[: edit.start] + edit.text + document[edit.end :]
    return document
