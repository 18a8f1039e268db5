"""A research topic made from a plan item, and when two items (or an item and the topic
researched for it) are the same: one normalisation for the plan, the floor and the views.

Light on purpose (no LangGraph): the CLI's live view ticks its todo list with it.
"""

from __future__ import annotations

from collections.abc import Iterable

# A topic is also what a researcher first searches for: one line, a sentence or two.
TOPIC_CHARS = 300


def as_topic(text: str) -> str:
    """`text` on one line, cut at a word to at most `TOPIC_CHARS` characters."""
    text = " ".join(text.split())
    return text if len(text) <= TOPIC_CHARS else text[:TOPIC_CHARS].rsplit(" ", 1)[0]


def topic_key(text: str) -> str:
    """What two plan items, or an item and the topic made from it (`as_topic`), share when
    they are the same: their words, case and spacing aside."""
    return as_topic(text).casefold()


def distinct(texts: Iterable[str]) -> list[str]:
    """`texts` with each item once (`topic_key`), kept where it first appears."""
    kept: dict[str, str] = {}
    for text in texts:
        kept.setdefault(topic_key(text), text)
    return list(kept.values())
