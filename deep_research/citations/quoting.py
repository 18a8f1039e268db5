"""The floor's evidence: the passages a run read that bear most on a topic, quoted word for
word and linked to the exact passage (a text fragment), for a report or a researcher's
findings that cite nothing the run read.

What is added is marked as quoted, not written: a reader must not take a page's words for
the model's conclusions. Relevance here is word overlap with the topic, cheap and
deterministic; the pages were already filtered for relevance when they were searched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from deep_research.citations.fragments import TextDirective, fragment_of
from deep_research.citations.hygiene import escape_label, link_destination, source_label
from deep_research.citations.registry import RegisteredSource, SourceRegistry
from deep_research.state import Source

MAX_PASSAGES = 3
PASSAGE_CHARS = 320  # a passage is one to three sentences, cut to whole sentences
MIN_PASSAGE_CHARS = 40  # shorter text (a menu item, a caption) is not evidence
MAX_SENTENCES_SCANNED = 2_000  # per page: a huge page costs a bounded scan

EVIDENCE_HEADING = "Quoted evidence"
EVIDENCE_NOTE = (
    "The model wrote no citation of the pages this run read, so these passages from them "
    "are quoted word for word, not written: read them as the sources' own words."
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_WORD = re.compile(r"\w{3,}")
_ADDRESS = re.compile(r"://|\bwww\.|\w@\w", re.IGNORECASE)
_COMMON = frozenset(
    "the and for are was were with that this from what which how why who when where does "
    "did has have had not but its it's into about than then them they their there these "
    "those will would can could should may might also been being over under more most "
    "some such only other any each our your you".split()
)


@dataclass(frozen=True)
class Passage:
    source: RegisteredSource
    text: str
    score: int


def words_of(text: str) -> set[str]:
    """The words of `text` that carry meaning: lower-cased, three letters or more."""
    return {word for word in _WORD.findall(text.casefold()) if word not in _COMMON}


def _sentences(text: str) -> Iterator[str]:
    for count, sentence in enumerate(_SENTENCE_END.split(text)):
        if count >= MAX_SENTENCES_SCANNED:
            return
        sentence = " ".join(sentence.split())
        if sentence:
            yield sentence


def _best_passage(source: RegisteredSource, focus: set[str]) -> Passage | None:
    """The page's passage sharing most words with the focus; ties go to the earlier one.

    A passage opens on a sentence that shares a word with the focus when one does (on the
    point, not the page's menu), else it ranks below every one that does. Sentences that
    hold a web address are never quoted: the check would take the address for a link to a
    page never retrieved, and cut it out of the quote."""
    best: Passage | None = None
    sentences = [s for s in _sentences(source.retrieved.text) if not _ADDRESS.search(s)]
    for start, first in enumerate(sentences):
        # A first sentence longer than a passage is cut at a word: a page may have no stops.
        text = first if len(first) <= PASSAGE_CHARS else first[:PASSAGE_CHARS].rsplit(" ", 1)[0]
        for sentence in sentences[start + 1 : start + 3]:
            longer = f"{text} {sentence}"
            if len(longer) > PASSAGE_CHARS:
                break
            text = longer
        if len(text) < MIN_PASSAGE_CHARS:
            continue
        on_point = not focus or bool(words_of(first) & focus)
        score = len(words_of(text) & focus) if on_point else -1
        if best is None or score > best.score:
            best = Passage(source, text, score)
    return best


def _link(passage: Passage) -> str:
    """A link to the passage on its page; to the page alone where a fragment cannot go."""
    source = passage.source
    url = source.url
    retrieved = source.retrieved
    span = retrieved.locate(TextDirective(passage.text))
    if span is not None and "#" not in url:
        url = f"{url}#{fragment_of([retrieved.directive_for(*span)])}"
    return f"[{source_label(source.title)}]({link_destination(url)})"


def quoted_evidence(
    focus: str, sources: Iterable[Source], count: int = MAX_PASSAGES, heading: str = ""
) -> str:
    """Up to `count` passages from `sources` (one a page, most relevant to `focus` first),
    each quoted and linked to itself, under a note that they are quoted; "" when the
    sources hold no passage worth quoting. `heading` (a Markdown heading's text) goes first."""
    focus_words = words_of(focus)
    found = [p for s in SourceRegistry(sources) if (p := _best_passage(s, focus_words))]
    # Most relevant first; among equals, the page retrieved first.
    found.sort(key=lambda p: (-p.score, p.source.number))
    chosen = found[:count]
    if not chosen:
        return ""
    lines = [f"## {heading}\n" if heading else "", f"*{EVIDENCE_NOTE}*\n"]
    for passage in chosen:
        lines.append(f"> {escape_label(passage.text)}\n>\n> — {_link(passage)}\n")
    return "\n".join(line for line in lines if line).strip() + "\n"
