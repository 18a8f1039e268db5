"""The words a text is matched by: three letters or more, casefolded, the common English
ones left out (every page has them, so sharing them says nothing), an acronym kept as the
word it is (WHO, ALL, CAN are not "who", "all", "can")."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w{3,}")
COMMON = frozenset(
    "the and for are was were with that this from what which how why who whom when where "
    "does did has have had not but its into about than then them they their there "
    "these those will would can could should may might also been being over under more "
    "most some such only other any all each our your you".split()
)


def matched_words(text: str) -> list[str]:
    """The words of `text` that matching counts, casefolded, in their order, each once."""
    found = (
        word for word in _WORD.findall(text) if word.isupper() or word.casefold() not in COMMON
    )
    return list(dict.fromkeys(word.casefold() for word in found))


def word_set(text: str) -> set[str]:
    """The words of `text` that matching counts, as a set."""
    return set(matched_words(text))
