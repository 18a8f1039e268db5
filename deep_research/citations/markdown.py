"""Markdown parsed by markdown-it-py, with the source positions that rewriting needs.

markdown-it-py gives block tokens line numbers but inline tokens no positions at all. Two
additions close that gap without re-implementing any grammar: the inline rules we care
about are wrapped so each records where it started and stopped in its inline source, and
`SourceMap` maps an inline source back into the document (an inline token's content is
its block's lines minus container prefixes such as `> ` or list indentation).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from markdown_it import MarkdownIt, rules_block, rules_inline
from markdown_it.common.normalize_url import validateLink
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from deep_research.errors import DeepResearchError

LinkKind = Literal["inline", "reference", "autolink", "bare", "image"]
InlineRule = Callable[[StateInline, bool], bool]
BlockRule = Callable[[StateBlock, int, int, bool], bool]

# Each recorded rule: its function, and the token it pushes that carries the span (pending
# text may be flushed before it; an escaped line break pushes a hardbreak, not recorded).
_RECORDED: dict[str, tuple[InlineRule, str]] = {
    "link": (rules_inline.link, "link_open"),
    "autolink": (rules_inline.autolink, "link_open"),
    "linkify": (rules_inline.linkify, "link_open"),
    "image": (rules_inline.image, "image"),
    "backticks": (rules_inline.backtick, "code_inline"),
    "html_inline": (rules_inline.html_inline, "html_inline"),
    "escape": (rules_inline.escape, "text_special"),
    "entity": (rules_inline.entity, "text_special"),
}
SPAN = "source_span"
# A paragraph placed after a text: where it parses as a paragraph of its own, the text
# leaves nothing open that would swallow what follows it.
PROBE = "deep-research-probe"
# How a raw HTML block that a blank line does not end is ended (CommonMark's kinds 1-5).
HTML_CLOSERS = (
    (re.compile(r"<(pre|script|style|textarea)(?=[\s>]|$)", re.IGNORECASE), "</{0}>"),
    (re.compile(r"<!--"), "-->"),
    (re.compile(r"<\?"), "?>"),
    (re.compile(r"<!\[CDATA\["), "]]>"),
    (re.compile(r"<![A-Za-z]"), ">"),
)


class UnmappedSourceError(DeepResearchError, LookupError):
    """An inline token's text could not be found in its block's lines."""


def _recording(name: str) -> InlineRule:
    rule, token_type = _RECORDED[name]

    def record(state: StateInline, silent: bool) -> bool:
        start, first_new = state.pos, len(state.tokens)
        matched = rule(state, silent)
        pushed = [t for t in state.tokens[first_new:] if t.type == token_type]
        if matched and not silent and pushed:
            token = pushed[0]
            if name == "linkify":  # the rule fires at ':' and takes back the scheme before it
                while start and (state.src[start - 1].isalnum() or state.src[start - 1] in ".+-"):
                    start -= 1
            label_end = start
            if name in ("link", "image"):
                label_start = start + (1 if name == "image" else 0)
                label_end = state.md.helpers.parseLinkLabel(state, label_start, name == "link")
            token.meta[SPAN] = (start, label_end, state.pos)
        return matched

    return record


def _trimmed_map(rule: BlockRule) -> BlockRule:
    """`rule`, with its inline token's map starting at the line its content starts on.

    Paragraphs and setext headings trim their content. A leading line that CommonMark does
    not count as blank (no-break or other Unicode spaces only) still starts the block, but
    the trim drops it, so the content would be looked for on a line it is not on.
    """

    def shifted(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
        first_new = len(state.tokens)
        matched = rule(state, start_line, end_line, silent)
        for token in state.tokens[first_new:] if matched and not silent else []:
            if token.type == "inline" and token.map:
                first, last = token.map
                raw = state.getLines(first, last, state.blkIndent, False)
                # The content never starts with a trimmed character, so it is first found
                # exactly where the trimmed lead ends.
                lead = raw[: raw.find(token.content)] if token.content else raw
                token.map = [first + lead.count("\n"), last]
        return matched

    return shifted


def make_parser() -> MarkdownIt:
    """CommonMark plus tables and bare-URL links, as chat UIs render reports."""
    md = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "linkify"])
    # text_join would merge escapes into plain text and lose their positions; core linkify
    # finds links without positions (bare http(s) URLs come from the inline rule instead).
    md.disable(["text_join"])
    md.core.ruler.disable("linkify")
    for name in _RECORDED:
        md.inline.ruler.at(name, _recording(name))
    md.block.ruler.at("paragraph", _trimmed_map(rules_block.paragraph))
    md.block.ruler.at("lheading", _trimmed_map(rules_block.lheading))
    # markdown-it leaves `file:` links as text, but other renderers make them links: they
    # are parsed as links so the check sees them (only library documents are kept).
    md.validateLink = _file_or_default  # type: ignore[method-assign]
    return md


def _file_or_default(url: str) -> bool:
    return url.strip().lower().startswith("file:") or validateLink(url)


_PARSER = make_parser()
# Blocks alone, for `close_open_blocks`: which block a text ends in needs no inline rules
# (linkify's scan is quadratic on a run of `<http://`: 62 s for 160 KB).
_BLOCKS = MarkdownIt("commonmark").enable(["table"])
_BLOCKS.core.ruler.disable("inline")


def parse(markdown: str) -> list[Token]:
    return _PARSER.parse(markdown)


def close_open_blocks(text: str) -> str:
    """`text` with a code fence or raw HTML block it leaves open closed: a reply cut at its
    token limit inside one would turn all that follows it (sections stitched after it, the
    notes and Sources list added after a report) into code."""
    if "```" not in text and "~~~" not in text and "<" not in text:
        return text  # no fence and no raw HTML: nothing can be open (a long report parses once)
    parsed = _BLOCKS.parse(f"{text}\n\n{PROBE}")
    blocks = [token for token in parsed if token.level == 0 and token.map]
    last = blocks[-1]
    if last.type == "fence":
        return f"{text}\n{last.markup}"
    if last.type == "html_block":
        opening = last.content.lstrip()
        for pattern, closer in HTML_CLOSERS:
            if found := pattern.match(opening):
                return f"{text}\n{closer.format(*found.groups())}"
    return text


@dataclass(frozen=True)
class Link:
    """One link in an inline source: `[label](href "title")`, `[label][ref]`, `<href>`, href.

    Images, `![alt](src)` in either form, are kept in the same shape with kind "image".
    """

    kind: LinkKind
    href: str
    title: str
    start: int
    label_end: int  # offset of the closing ']' (== start for autolinks and bare URLs)
    end: int
    alt: str = ""  # images only: the description as plain text

    @property
    def label(self) -> tuple[int, int]:
        """Where the link text is; for autolinks and bare URLs, the text is the URL."""
        if self.kind in ("inline", "reference"):
            return self.start + 1, self.label_end
        return self.start, self.end


@dataclass
class Inline:
    """An inline token's source, its links, images and raw HTML tags, and the spans where
    prose rules do not apply."""

    token: Token
    links: list[Link] = field(default_factory=list)
    images: list[Link] = field(default_factory=list)
    html: list[tuple[int, int]] = field(default_factory=list)
    protected: list[tuple[int, int]] = field(default_factory=list)

    @property
    def source(self) -> str:
        return self.token.content


def describe_inline(token: Token) -> Inline:
    """An inline token's links and protected spans, from the positions its rules recorded."""
    inline = Inline(token)
    for child in token.children or []:
        span = child.meta.get(SPAN)
        if span is None:
            continue
        start, label_end, end = span
        if child.type == "link_open":
            inline.links.append(_link(child, inline.source, start, label_end, end))
            if child.markup in ("autolink", "linkify"):
                inline.protected.append((start, end))
            else:
                inline.protected.append((label_end, end))
        else:  # code, raw HTML, escapes, entities, images: never prose
            inline.protected.append((start, end))
            if child.type == "image":
                src, title = str(child.attrs.get("src", "")), str(child.attrs.get("title", ""))
                alt = plain_text(child.children or [])
                inline.images.append(Link("image", src, title, start, label_end, end, alt))
            elif child.type == "html_inline":
                inline.html.append((start, end))
    return inline


def plain_text(tokens: list[Token]) -> str:
    """What inline tokens read as without markup, as an image's alt text is rendered."""
    parts = []
    for token in tokens:
        if token.children:
            parts.append(plain_text(token.children))
        elif token.type in ("text", "text_special", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


def _link(token: Token, source: str, start: int, label_end: int, end: int) -> Link:
    href, title = str(token.attrs.get("href", "")), str(token.attrs.get("title", ""))
    if token.markup == "autolink":
        return Link("autolink", href, title, start, start, end)
    if token.markup == "linkify":
        return Link("bare", href, title, start, start, end)
    kind: LinkKind = "inline" if source[label_end + 1 : label_end + 2] == "(" else "reference"
    return Link(kind, href, title, start, label_end, end)


class SourceMap:
    """Maps offsets in inline sources to offsets in the whole document."""

    def __init__(self, document: str) -> None:
        self.document = document
        self.lines = document.split("\n")
        self.line_starts = [0]
        for line in self.lines[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)
        self._cursor: dict[int, int] = {}  # per line: where the next cell/inline may start

    def mapper(self, token: Token) -> Callable[[int], int]:
        """A function from offsets in `token.content` to document offsets."""
        if token.map is None:
            raise UnmappedSourceError("inline token without a line map")
        first_line = token.map[0]
        starts, leads, anchors = [], [], []
        offset = 0
        for index, line in enumerate(token.content.split("\n")):
            stripped = line.lstrip()
            number = first_line + index
            if number >= len(self.lines):
                raise UnmappedSourceError(f"line {number} is past the end")
            column = self.lines[number].find(stripped, self._cursor.get(number, 0))
            if column < 0:
                raise UnmappedSourceError(f"{stripped!r} not found on line {number}")
            self._cursor[number] = column + len(stripped)
            starts.append(offset)
            leads.append(len(line) - len(stripped))
            anchors.append(self.line_starts[number] + column)
            offset += len(line) + 1

        def to_document(position: int) -> int:
            index = bisect_right(starts, position) - 1
            return anchors[index] + max(position - starts[index] - leads[index], 0)

        return to_document

    def line_span(self, first: int, last: int) -> tuple[int, int]:
        """Document offsets covering lines [first, last), with their trailing newline."""
        start = self.line_starts[first]
        end = self.line_starts[last] if last < len(self.lines) else len(self.document)
        return start, end
