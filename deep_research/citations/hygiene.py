"""Markdown hygiene: stray tildes, numbered headings, and the closing Sources section."""

from __future__ import annotations

import re
from collections.abc import Iterable

from markdown_it.token import Token

from deep_research.citations.markdown import Inline
from deep_research.citations.registry import RegisteredSource

# "1. Background", "2.3. Details", "4) Costs" — but not "2024 in review" or "3.5 million homes".
_NUMBERED = re.compile(r"\d+(?:\.\d+)*[.)]\s+")
_SOURCES_TITLES = frozenset(
    {"sources", "references", "bibliography", "works cited", "citations", "sources cited",
     "sources retrieved", "source list", "further reading"}
)  # fmt: skip
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


def sources_sections(tokens: list[Token]) -> list[tuple[int, int]]:
    """Line ranges of the model's own Sources/References sections (code writes the real one)."""
    sections = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        title = tokens[index + 1].content
        title = title[numbered_prefix(title) :].strip().rstrip(":").strip("*_ ").lower()
        if title not in _SOURCES_TITLES:
            continue
        level, end = int(token.tag[1:]), None
        for later in tokens[index + 1 :]:
            if later.type == "heading_open" and int(later.tag[1:]) <= level and later.map:
                end = later.map[0]
                break
        sections.append((token.map[0], end if end is not None else -1))
    return sections


def escape_label(text: str) -> str:
    """Text safe to place inside `[...]` of a link: one line, no Markdown or HTML."""
    return _LABEL_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def link_destination(url: str) -> str:
    """A URL as a link destination; spaces, brackets and parentheses would end it early."""
    for char, code in ((" ", "%20"), ("<", "%3C"), (">", "%3E"), ("(", "%28"), (")", "%29")):
        url = url.replace(char, code)
    return url


def sources_section(cited: Iterable[RegisteredSource], heading: str = "Sources") -> str:
    """The closing list: each cited source once, in order of first citation."""
    lines = [
        f"{number}. [{escape_label(source.title)}]({link_destination(source.url)})"
        for number, source in enumerate(cited, 1)
    ]
    return f"## {heading}\n\n" + "\n".join(lines) if lines else ""
