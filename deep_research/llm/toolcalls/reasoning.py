"""Reasoning in a reply: `<think>` blocks that open it, or the end of one the template opened.

Only reasoning at the very start of a reply is removed. A tag further on is text the
model wrote about (a report on reasoning models, a quoted page), and removing from it
would cut a report short or turn a quoted call into the whole reply.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"\s*<think>", re.IGNORECASE)
_CLOSE = re.compile(r"</think>", re.IGNORECASE)
# Signs that text is already the answer, not reasoning: a Markdown heading, fence,
# blockquote or table row, a link, or a `<think>` the text opened itself.
_ANSWER_SIGNS = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]|```|~~~|>|\|)|\]\(|<think>", re.MULTILINE | re.IGNORECASE
)


def strip_think(text: str) -> str:
    """The reply without the reasoning that starts it.

    Reasoning is one or more `<think>` blocks opening the reply (an unclosed one ran out
    of tokens and runs to the end) or, when the reply opens with no tag, text up to a
    lone `</think>` (the template opened the block in the prompt) that starts its line
    and follows no sign of a written answer.
    """
    return text[_reasoning_end(text) :].strip()


def _reasoning_end(text: str) -> int:
    end = 0
    while (opening := _OPEN.match(text, end)) is not None:
        close = _CLOSE.search(text, opening.end())
        if close is None:
            return len(text)
        end = close.end()
    return end if end else _template_opened_end(text)


def _template_opened_end(text: str) -> int:
    close = _CLOSE.search(text)
    if close is None:
        return 0
    line_start = text.rfind("\n", 0, close.start()) + 1
    # Templates write the tag on a line of its own; a quoted one sits inside a sentence.
    if text[line_start : close.start()].strip():
        return 0
    # Reasoning is plain prose; a heading or a link before the tag means the reply is
    # already an answer that quotes the tag, and none of it may be dropped.
    if _ANSWER_SIGNS.search(text, 0, close.start()):
        return 0
    return close.end()
