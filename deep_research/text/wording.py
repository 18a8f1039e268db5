"""How text is worded for people: a count with its noun, a long text as one short line.

Light on purpose: the CLI's `--help` path imports it.
"""

from __future__ import annotations

# Nouns whose plural is not the noun + "s".
_PLURALS = {
    "search": "searches",
    "fetch": "fetches",
    "query": "queries",
    "retry": "retries",
    "reply": "replies",
}


def plural(count: int, noun: str) -> str:
    """`1 source`, `2 sources`, `0 searches`, `1,200 tokens`."""
    return f"{count:,} {noun if count == 1 else _PLURALS.get(noun, noun + 's')}"


def one_line(text: str, limit: int) -> str:
    """`text` on one line of at most `limit` characters, its end replaced by "…" when cut
    (trace names, progress lines, replay previews, source labels)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def first_line(text: str, limit: int = 80) -> str:
    """The first non-empty line of `text`, at most `limit` characters, '…' when cut."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
