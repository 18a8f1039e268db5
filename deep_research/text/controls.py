"""Control codes out of outside text before it reaches a terminal or a client's display.

C0 and C1 control codes except tab and newline: ESC starts terminal escape sequences (an
OSC 8 hyperlink, a title change, cursor moves), and 0x9b / 0x9d are their one-byte forms.
Topics, queries, answers and file names come from a user, a model, a page or a disk.

Lone surrogates too, out of text bound for UTF-8: JSON's `"\\ud83d"` without its pair (in a
model's reply, a search API's snippet) decodes to a string no UTF-8 writer takes.
"""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def without_controls(text: object) -> str:
    """`text` as a string without terminal control codes (tab and newline kept)."""
    return _CONTROL.sub("", str(text))


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate made U+FFFD, the replacement character, so that it
    can be tokenized, stored and written as UTF-8; a pair that arrived in two pieces (two
    streamed chunks of one emoji) is joined into its character."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def without_surrogates_in(data: Any) -> Any:
    """JSON-like `data` (a tool call's arguments) with `without_surrogates` applied to every
    string in it, keys too: two keys that differ only in their lone surrogates become one
    (the later value), and a tuple becomes a list, as JSON has it."""
    if isinstance(data, str):
        return without_surrogates(data)
    if isinstance(data, dict):
        return {without_surrogates_in(k): without_surrogates_in(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [without_surrogates_in(item) for item in data]
    return data
