"""A text as one short line: whitespace collapsed, cut with "…" (trace names, progress lines,
replay previews). Light on purpose: the CLI's `--help` path imports it."""

from __future__ import annotations


def one_line(text: str, limit: int) -> str:
    """`text` on one line of at most `limit` characters, its end replaced by "…" when cut."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
