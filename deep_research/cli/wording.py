"""How the CLI words things: a count with its noun, a long text as one short line."""

from __future__ import annotations

# Nouns whose plural is not the noun + "s".
_PLURALS = {"search": "searches", "fetch": "fetches", "query": "queries"}


def plural(count: int, noun: str) -> str:
    """`1 source`, `2 sources`, `0 searches`, `1,200 tokens`."""
    return f"{count:,} {noun if count == 1 else _PLURALS.get(noun, noun + 's')}"


def first_line(text: str, limit: int = 80) -> str:
    """The first non-empty line of `text`, at most `limit` characters, '…' when cut."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
