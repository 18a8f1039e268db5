"""Control codes out of outside text before it reaches a terminal or a client's display.

C0 and C1 control codes except tab and newline: ESC starts terminal escape sequences (an
OSC 8 hyperlink, a title change, cursor moves), and 0x9b / 0x9d are their one-byte forms.
Topics, queries, answers and file names come from a user, a model, a page or a disk.

Lone surrogates too, out of text bound for UTF-8: JSON's `"\\ud83d"` without its pair (in a
model's reply, a search API's snippet) decodes to a string no UTF-8 writer takes.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")  # a pair is one character in a `str`


def without_controls(text: object) -> str:
    """`text` as a string without terminal control codes (tab and newline kept)."""
    return _CONTROL.sub("", str(text))


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate made U+FFFD, the replacement character: it can be
    tokenized, stored and written as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text)
