"""A researcher's query made fit to send, or refused before it costs a search.

Small models send junk: an empty string, the schema's own placeholder (`query1`, `your query
here`), markup, or HTML-entity soup that a server's chat template escaped and the model
copied back (`&lt;b&gt;heat pumps&lt;/b&gt;`). Entities are unescaped, tags dropped and
spacing collapsed; what is left is sent, unless nothing worth searching is. A refused query
is never sent and never counted: the model reads why, in one line, and may ask again.
Cleaning is a pure function of the text, so a step run again after a stop cleans alike.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from deep_research.text.controls import without_controls

# What a search provider accepts (Tavily takes 400 characters); a longer query is cut at a word.
MAX_QUERY_CHARS = 400
# Read no further than this: a hostile query may be megabytes long.
MAX_READ_CHARS = 4 * MAX_QUERY_CHARS
UNESCAPE_ROUNDS = 3  # `&amp;lt;` is escaped twice; three rounds undo what a template does

TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>|<!--.*?-->", re.DOTALL)
# The words a placeholder is made of, once brackets, quotes and numbers are gone.
ONE_PLACEHOLDER = (
    r"(?:(?:(?:your|my|a|an|the|example|sample|insert|enter|type|put)\s+)*"
    r"(?:search\s+)?(?:query|queries|terms?|keywords?|string|text|placeholder|q)"
    r"(?:\s+(?:here|goes\s+here))?"
    r"|your\s+(?:search|question|topic)(?:\s+here)?|search|todo|tbd|none|null|n\s?a|xxx|foo|bar)"
)
# One placeholder, or several (`["query1", "query2"]` sent as one string).
PLACEHOLDER = re.compile(rf"{ONE_PLACEHOLDER}(?:\s+{ONE_PLACEHOLDER})*")
# Characters that show nothing: zero-width spaces and joiners, BOMs, direction marks.
INVISIBLE = re.compile(r"[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
EXAMPLE = "EU battery recycling capacity 2025"


@dataclass(frozen=True)
class Cleaned:
    """What is sent for a query, or why nothing is."""

    query: str  # the cleaned text (sent and shown), or the asked text, shortened, if refused
    refused: str = ""  # one line for the model; empty: the query is sent


def clean(asked: str) -> Cleaned:
    """`asked` with entities unescaped, tags dropped and spacing collapsed, or refused when
    what is left is empty, a placeholder or no word at all."""
    text = asked[:MAX_READ_CHARS]
    for _ in range(UNESCAPE_ROUNDS):
        unescaped = html.unescape(text)
        if unescaped == text:
            break
        text = unescaped
    text = INVISIBLE.sub("", without_controls(text))
    whole = " ".join(text.split())
    text = " ".join(TAG.sub(" ", text).split())
    shown = _shortened(whole or asked)
    if not whole:
        return Cleaned(shown, _refusal("it is empty"))
    if _placeholder(whole) or (text and _placeholder(text)):
        return Cleaned(shown, _refusal(f"{shown!r} is a placeholder, not a search"))
    if not text:
        return Cleaned(shown, _refusal(f"{shown!r} is markup with no words in it"))
    if not any(char.isalnum() for char in text):
        return Cleaned(shown, _refusal(f"{shown!r} has no words in it"))
    return Cleaned(_cut(text))


def _placeholder(text: str) -> bool:
    words = re.sub(r"[\W_\d]+", " ", text.casefold()).strip()
    return not words and not any(c.isdigit() for c in text) or bool(PLACEHOLDER.fullmatch(words))


def _refusal(why: str) -> str:
    return (
        f"Not searched: {why}. No search was used; write the words to look for instead, "
        f'for example "{EXAMPLE}".'
    )


def _shortened(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _cut(text: str) -> str:
    if len(text) <= MAX_QUERY_CHARS:
        return text
    head = text[:MAX_QUERY_CHARS]
    return head.rsplit(" ", 1)[0] if " " in head else head
