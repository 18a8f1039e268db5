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
from deep_research.text.controls import without_controls
from deep_research.text.language import heading
from deep_research.text.words import word_set

MAX_PASSAGES = 3
PASSAGE_CHARS = 320  # a passage is one to three sentences, cut to whole sentences
MIN_PASSAGE_CHARS = 20  # shorter text (a menu item, a button) is not evidence
MAX_SENTENCES_SCANNED = 2_000  # per page: a huge page costs a bounded scan

EVIDENCE_HEADING = heading("evidence", "en")  # a report in another language: its own
EVIDENCE_NOTE = (
    "The model wrote no citation of the pages this run read, so these passages from them "
    "are quoted word for word, not written: read them as the sources' own words."
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_ADDRESS = re.compile(r"://|\bwww\.|\w@\w", re.IGNORECASE)
# Markdown that extraction keeps (headings, tables, emphasis, code, links, lists, quotes).
_MARKUP = re.compile(r"^(?:#|[-*+] |\d+[.)] )|[|`<>\[\]]|\*\*|__|~~")
# Direction overrides and invisible characters: a quote must read as the page shows it.
_HIDDEN = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Passage:
    source: RegisteredSource
    text: str
    score: int


def _sentences(text: str) -> Iterator[str | None]:
    """The page's sentences, one line each; None for one that may not be quoted: it holds a
    web address (the check would cut it out as a link to a page never retrieved), Markdown
    a browser does not show (a text fragment could not find it on the page), or a
    direction override or invisible character."""
    for count, sentence in enumerate(_SENTENCE_END.split(without_controls(text))):
        if count >= MAX_SENTENCES_SCANNED:
            return
        sentence = " ".join(sentence.split())
        if sentence:
            unquotable = _ADDRESS.search(sentence) or _MARKUP.search(sentence)
            yield None if unquotable or _HIDDEN.search(sentence) else sentence


def _best_passage(source: RegisteredSource, focus: set[str]) -> Passage | None:
    """The page's passage sharing most words with the focus; ties go to the earlier one.

    A passage is one to three sentences that follow each other on the page. It opens on a
    sentence that shares a word with the focus when one does (on the point, not the page's
    menu), else it ranks below every one that does."""
    best: Passage | None = None
    sentences = list(_sentences(source.retrieved.text))
    for start, first in enumerate(sentences):
        if first is None:
            continue
        # A first sentence longer than a passage is cut at a word: a page may have no stops.
        text = first if len(first) <= PASSAGE_CHARS else first[:PASSAGE_CHARS].rsplit(" ", 1)[0]
        for sentence in sentences[start + 1 : start + 3]:
            if sentence is None or len(text) + 1 + len(sentence) > PASSAGE_CHARS:
                break
            text = f"{text} {sentence}"
        if len(text) < MIN_PASSAGE_CHARS:
            continue
        on_point = not focus or bool(word_set(first) & focus)
        score = len(word_set(text) & focus) if on_point else -1
        if best is None or score > best.score:
            best = Passage(source, text, score)
    return best


def _link(passage: Passage) -> str:
    """A link to the passage on its page; to the page alone where a fragment cannot go."""
    source = passage.source
    url = source.url
    retrieved = source.retrieved
    span = retrieved.locate(TextDirective(passage.text))
    # A PDF's link goes to the file (or its page): browsers find no text fragment in one.
    if span is not None and "#" not in url and not source.is_pdf:
        url = f"{url}#{fragment_of([retrieved.directive_for(*span)])}"
    return f"[{source_label(source.title)}]({link_destination(url)})"


QUOTE_SOURCE = "\n> — "  # what opens each quoted passage's link line


def passages_in(evidence: str) -> int:
    """How many passages `quoted_evidence` quoted."""
    return evidence.count(QUOTE_SOURCE)


def quoted_evidence(
    focus: str, sources: Iterable[Source], count: int = MAX_PASSAGES, heading: str = ""
) -> str:
    """Up to `count` passages from `sources` (one a page, most relevant to `focus` first),
    each quoted and linked to itself, under a note that they are quoted; "" when the
    sources hold no passage worth quoting. `heading` (a Markdown heading's text) goes first."""
    focus_words = word_set(focus)
    found = [p for s in SourceRegistry(sources) if (p := _best_passage(s, focus_words))]
    # Most relevant first; among equals, the page retrieved first.
    found.sort(key=lambda p: (-p.score, p.source.number))
    chosen = found[:count]
    if not chosen:
        return ""
    lines = [f"## {heading}\n" if heading else "", f"*{EVIDENCE_NOTE}*\n"]
    for passage in chosen:
        lines.append(f"> {escape_label(passage.text)}\n>{QUOTE_SOURCE}{_link(passage)}\n")
    return "\n".join(line for line in lines if line).strip() + "\n"
