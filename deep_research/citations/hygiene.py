"""Markdown hygiene: stray tildes, numbered headings, what goes with a removed citation,
and the closing Sources section."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable

from markdown_it.token import Token

from deep_research.citations.markdown import Inline, Link, describe_inline
from deep_research.citations.registry import RegisteredSource
from deep_research.text.language import heading, sources_titles
from deep_research.text.wording import one_line

# "1. Background", "2.3. Details", "4) Costs" — but not "2024 in review" or "3.5 million homes".
_NUMBERED = re.compile(r"\d+(?:\.\d+)*[.)]\s+")
_SOURCES_TITLES = (
    frozenset(
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
            # What a report in another language calls it, beside the headings code writes.
            "literatur",
            "referenzen",
            "quellenangaben",
            "références",
            "referencias",
            "riferimenti",
            "referências",
            "литература",
            "参考文献",
            "参考资料",
            "참고 문헌",
            "tài liệu tham khảo",
        }
    )
    | sources_titles()  # "Quellen", "来源": the headings code writes, in every language
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


# In a prose mask (`_prose_mask`): a link's span, and any other span prose rules skip.
_LINK_MARK, _OPAQUE_MARK = "\0", "\1"
# Parentheses in prose holding nothing but links and separators: "([IEA](u))", "([A](u); [B](v))".
_ASIDE = re.compile(r"\((?:[^\S\n]|[,;&]|\band\b|\0)*\)")
# A label that only points ("1", "[2]", "source 3"), not words of the sentence.
_MARKER_LABEL = re.compile(
    r"\[?\s*(?:(?:source|ref|reference|citation|cite)\.?\s*)?\d+\s*\]?", re.IGNORECASE
)


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


def citation_cuts(inline: Inline, removed: Callable[[Link], bool]) -> dict[int, tuple[int, int]]:
    """What goes with each removed link that is only a pointer, by the link's start offset.

    The words of a removed link stay when they are part of the sentence ("as [the agency
    reports](u), ..."). A link alone in parentheses, with other links or separators, is an
    aside naming a source ("Beds silt up ([Cockle beds of the inner Elsmere](u))."): left
    as text it reads as debris, so it goes with its parentheses and the space before them
    (with its separator only, when a link beside it stays). So does a label that only
    points: a number ("[1](u)", "[source 2](u)") or one in parentheses of its own.
    """
    cuts: dict[int, tuple[int, int]] = {}
    text, mask = inline.source, _prose_mask(inline)
    links = sorted(inline.links, key=lambda link: link.start)
    starts = [link.start for link in links]
    for aside in _ASIDE.finditer(mask):
        group = links[bisect_right(starts, aside.start()) : bisect_left(starts, aside.end())]
        if not group:
            continue
        gone = [removed(link) for link in group]
        if all(gone):
            start, end = _with_space_before(text, aside.start(), aside.end())
            for link in group:
                cuts[link.start] = (start, end) if link is group[0] else (link.start, link.start)
            continue
        for i, link in enumerate(group):
            if not gone[i]:
                continue
            if not all(gone[i + 1 :]):  # a kept link follows: the separator after this goes
                cuts[link.start] = (link.start, group[i + 1].start)
            else:  # the last ones go with the separator before them
                cuts[link.start] = (group[i - 1].end, link.end)
    for link in links:
        if link.start in cuts or link.kind not in ("inline", "reference") or not removed(link):
            continue
        label = text[slice(*link.label)].strip()
        if _MARKER_LABEL.fullmatch(label) or _one_parenthesis(label):
            cuts[link.start] = _with_space_before(text, link.start, link.end)
    return cuts


def _prose_mask(inline: Inline) -> str:
    """`inline.source` with each link's span as `_LINK_MARK`s and every other span prose
    rules skip (code, HTML, escapes, images) as `_OPAQUE_MARK`s, offsets unchanged."""
    chars = list(inline.source)
    for start, end in inline.protected:
        chars[start:end] = _OPAQUE_MARK * (end - start)
    for link in inline.links:
        chars[link.start : link.end] = _LINK_MARK * (link.end - link.start)
    return "".join(chars)


def _one_parenthesis(label: str) -> bool:
    """Whether `label` is one parenthesis: "(IEA, 2023)", not "(a) and (b)"."""
    if not (label.startswith("(") and label.endswith(")")):
        return False
    depth = 0
    for index, char in enumerate(label):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return index == len(label) - 1
    return False


def _with_space_before(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened by the spaces before it on its line, or else by those after it."""
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    if before < start:
        return before, end
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    return start, after


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


def sources_section(
    cited: Iterable[RegisteredSource], language: str = "en", today: str = ""
) -> str:
    """The closing list, headed in the report's `language`: each cited source once, in
    order of first citation, with the date it was retrieved (a page recalled from memory
    its first; one read in this run `today`)."""
    lines = []
    for number, source in enumerate(cited, 1):
        line = f"{number}. [{source_label(source.title)}]({link_destination(source.url)})"
        if retrieved := source.retrieved_on or today:
            line += f" ({heading('retrieved', language)} {retrieved})"
        lines.append(line)
    return f"## {heading('sources', language)}\n\n" + "\n".join(lines) if lines else ""
