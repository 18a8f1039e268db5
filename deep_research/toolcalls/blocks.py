"""Where a reply quotes rather than speaks: code fences and `<think>` blocks within it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Fences whose lines may be calls: small models wrap their calls in these.
CALL_FENCES = {"", "json", "tool_call"}

_BLOCK = re.compile(
    r"(?P<fence>^[ \t]*```[ \t]*(?P<info>[\w-]*)[^\n]*\n(?P<body>.*?)(?:^[ \t]*```[ \t]*$|\Z))"
    # A `<think>` block the reply did not open with is text it quotes (see `think`).
    r"|<think>.*?(?:</think>|\Z)",
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
        holds_calls = found.group("fence") and found.group("info").lower() in CALL_FENCES
        body = found.span("body") if holds_calls else None
        yield Block(found.start(), found.end(), body)
