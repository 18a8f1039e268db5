"""Where a reply quotes rather than speaks: code blocks, HTML code and `<think>` within it.

Small models wrap their own calls in one kind of fence only: three backticks, tagged
`json` or `tool_call` or untagged. Every other code form is how Markdown shows quoted
code, so a call-shaped line inside it is text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Languages of the fences that may hold calls (an untagged ``` fence may too).
CALL_FENCES = {"json", "tool_call"}
# A line indented this many columns or more is an indented code block in Markdown.
CODE_INDENT = 4

_BLOCK = re.compile(
    # A fence: ``` or ~~~, three or more, closed by a line of at least as many of the same
    # character, or by the end of the reply. A backtick fence's info string has no backtick.
    r"(?P<fence>^(?P<indent>[ \t]*)"
    r"(?:(?P<ticks>`{3,})(?P<tick_info>[^`\n]*)|(?P<tildes>~{3,})(?P<tilde_info>[^\n]*))"
    r"(?:\n|\Z)(?P<body>.*?)"
    r"(?:^[ \t]*(?(ticks)(?P=ticks)`*|(?P=tildes)~*)[ \t]*$|\Z))"
    # HTML that shows code or a quotation, and a `<think>` block the reply did not open
    # with (see `think`). An unclosed one runs to the end, as a browser would show it.
    r"|<(?P<tag>pre|code|samp|blockquote|think)(?=[\s>/])[^<>]*>.*?(?:</(?P=tag)\s*>|\Z)",
    re.DOTALL | re.MULTILINE | re.IGNORECASE,
)


@dataclass(frozen=True)
class Block:
    """A quoted span; `body` is where calls may be, for the fences that may hold them."""

    start: int
    end: int
    body: tuple[int, int] | None


def blocks(text: str) -> Iterator[Block]:
    """The quoted spans of `text`, in order, none inside another."""
    for found in _BLOCK.finditer(text):
        body = found.span("body") if _holds_calls(found) else None
        yield Block(found.start(), found.end(), body)


def indented_as_code(indent: str) -> bool:
    """Whether a line starting with `indent` is part of an indented code block."""
    # Tabs stop every four columns, as in Markdown.
    return len(indent.expandtabs(4)) >= CODE_INDENT


def _holds_calls(fence: re.Match[str]) -> bool:
    if fence.group("ticks") != "```" or indented_as_code(fence.group("indent")):
        return False
    info = fence.group("tick_info")
    return not info.strip() or _language(info) in CALL_FENCES


def _language(info: str) -> str:
    """The language an info string names: ```python, ```{python}, ```.py, ```{.py title=x}."""
    words = info.replace("{", " ").replace("}", " ").split()
    return words[0].lstrip(".").lower() if words else ""
