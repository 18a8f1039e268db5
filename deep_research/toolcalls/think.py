"""Reasoning in a reply: `<think>` blocks, and the end of a block the template opened."""

from __future__ import annotations

import re

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    """The reply without reasoning: `<think>` blocks, or everything before a lone `</think>`."""
    text = _THINK.sub("", text)
    # Some templates open the block in the prompt, so the reply holds only its end.
    _, closed, after = text.partition("</think>")
    return (after if closed else text).strip()
