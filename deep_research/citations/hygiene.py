"""Markdown hygiene: stray tildes, numbered headings, and the closing Sources section."""

from __future__ import annotations

import re
from collections.abc import Iterable

from markdown_it.token import Token

from deep_research.citations.markdown import Inline, describe_inline
from deep_research.citations.registry import RegisteredSource
from deep_research.text.wording import one_line

# "1. Background", "2.3. Details", "4) Costs" — but not "2024 in review" or "3.5 million homes".
_NUMBERED = re.compile(r"\d+(?:\.\d+)*[.)]\s+")
_SOURCES_TITLES = frozenset(
    {
        "sources",
        "references",
        "bibliography",
        "works cited",
        "citations",
        "sources cited",
        "sources retrieved",
        "source list",
        "further reading",
    }
)
# What a list of references is made of; anything else (code, a table, a quote) is content.
_ENTRY_BLOCKS = frozenset(
    {
        "paragraph_open",
        "paragraph_close",
        "bullet_list_open",
        "bullet_list_close",
        "ordered_list_open",
        "ordered_list_close",
        "list_item_open",
        "list_item_close",
        "hr",
    }
)
# "IEA: https://..." is an entry; "The IEA overview [x](...) is a good start" is prose.
_LABEL_WORDS = 3
# A page title as the report shows it: one line, cut to this many characters.
MAX_LABEL_CHARS = 120
# Characters that would make untrusted page titles into Markdown or HTML when listed.
_LABEL_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def numbered_prefix(heading: str) -> int:
    """How many leading characters of a heading's text are a section number (0 if none)."""
    match = _NUMBERED.match(heading)
    return match.end() if match and match.end() < len(heading) else 0


def stray_tildes(inline: Inline) -> list[int]:
    """Offsets of `~` in prose: not in code, URLs, raw HTML, images, or already escaped.

    In GFM two of them strike through everything between, and a tilde meant as
    "approximately" ends up crossing out the claim it qualifies.
    """
    return [
        offset
        for offset, char in enumerate(inline.source)
        if char == "~" and not any(start <= offset < end for start, end in inline.protected)
    ]


def model_sources_section(tokens: list[Token]) -> int | None:
    """The line the model's own closing Sources section starts on, if it wrote one.

    Code writes the real list, so the model's goes; but only when it is the last section
    and holds nothing but reference entries, list items with a link or lines of links. A
    "Sources" heading over prose ("the three heat sources") or a "Further reading" with
    sentences is content, and stays (its links are checked like any other).
    """
    headings = [index for index, token in enumerate(tokens) if token.type == "heading_open"]
    heading = headings[-1] if headings else 0
    if not headings or not (lines := tokens[heading].map):
        return None
    title = tokens[heading + 1].content
    title = title[numbered_prefix(title) :].strip().rstrip(":").strip("*_ ").lower()
    if title not in _SOURCES_TITLES:
        return None
    list_depth = 0
    for token in tokens[heading + 3 :]:  # past heading_open, its inline and heading_close
        if token.type in ("list_item_open", "list_item_close"):
            list_depth += token.nesting
        if token.type == "inline":
            entry = describe_inline(token)
            if not (entry.links if list_depth else _lines_of_links(entry)):
                return None
        elif token.type not in _ENTRY_BLOCKS:
            return None
    return lines[0]


def _lines_of_links(inline: Inline) -> bool:
    """Whether every line has a link and, besides its links, at most a short label."""
    text, line_start = inline.source, 0
    for line in text.split("\n"):
        line_end = line_start + len(line)
        inside = [
            (max(link.start, line_start), min(link.end, line_end))
            for link in inline.links
            if link.start < line_end and link.end > line_start
        ]
        outside = text[line_start:line_end]
        for start, end in sorted(inside, reverse=True):
            outside = outside[: start - line_start] + " " + outside[end - line_start :]
        if not inside or len(re.findall(r"\w*[^\W\d_]\w*", outside)) > _LABEL_WORDS:
            return False
        line_start = line_end + 1
    return True


def escape_label(text: str) -> str:
    """Text safe to place inside `[...]` of a link: one line, no Markdown or HTML."""
    return _LABEL_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def source_label(title: str) -> str:
    """A page's title as the report shows it: one line of at most `MAX_LABEL_CHARS`, inert.

    The title is the page's own (web text): a heading, an instruction or a whole article
    in it stays a short line of plain text inside the link's label.
    """
    return escape_label(one_line(title, MAX_LABEL_CHARS))


def code_span(text: str) -> str:
    """Text as one inline code span: shown as typed, and nothing in it links.

    Backslashes do not escape inside code, so the fence is one backtick longer than the
    longest run in the text, padded when the text starts or ends with a backtick.
    """
    text = " ".join(text.split())
    fence = "`" * (1 + max(map(len, re.findall("`+", text)), default=0))
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def link_destination(url: str) -> str:
    """A URL as a link destination; spaces, brackets and parentheses would end it early."""
    for char, code in ((" ", "%20"), ("<", "%3C"), (">", "%3E"), ("(", "%28"), (")", "%29")):
        url = url.replace(char, code)
    return url


def sources_section(cited: Iterable[RegisteredSource], heading: str = "Sources") -> str:
    """The closing list: each cited source once, in order of first citation."""
    lines = [
        f"{number}. [{source_label(source.title)}]({link_destination(source.url)})"
        + (f" (retrieved {source.retrieved_on})" if source.retrieved_on else "")
        for number, source in enumerate(cited, 1)
    ]
    return f"## {heading}\n\n" + "\n".join(lines) if lines else ""
