"""Cited claims for the groundedness judge: each citation's sentence and the passage it cites.

A claim is the sentence a citation sits in, with link syntax reduced to its label. Its
passage is the cited source's retrieved text around the link's text fragment when it has
one that is found there, else the start of that text. A citation to a page the run never
retrieved has no passage: the judge is not asked, and the claim counts as unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from deep_research.citations import SourceRegistry
from deep_research.citations.fragments import FragmentError, parse_directives
from deep_research.citations.markdown import Link, describe_inline, parse
from deep_research.text.urls import DIRECTIVE_DELIMITER, split_fragment

MAX_CLAIMS = 24  # judge calls per report are capped: one per claim
PASSAGE_CHARS = 3000  # what the judge reads of the cited page
CLAIM_CHARS = 600
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[*])")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # Markdown's backslash escapes
_WORD = re.compile(r"[^\W\d_]{2,}")  # a word of two letters or more


@dataclass(frozen=True)
class Claim:
    text: str
    url: str  # as cited, fragment included
    passage: str | None  # None: the cited page was not retrieved in the run


def cited_claims(report: str, sources: list[Any]) -> Iterator[Claim]:
    """One claim per distinct (sentence, cited page) pair, in report order, at most MAX_CLAIMS."""
    registry = SourceRegistry(sources or [])
    seen: set[tuple[str, str]] = set()
    for token in parse(report):
        if token.type != "inline":
            continue
        inline = describe_inline(token)
        for link in inline.links:
            if link.href.startswith("#"):
                continue
            claim, stated = _sentence(inline.source, inline.links, link)
            if not stated:
                continue  # a list of sources, not a claim: only links, nothing stated
            key = (claim, split_fragment(link.href)[0])
            if key in seen:
                continue
            seen.add(key)
            yield Claim(claim, link.href, _passage(registry, link.href))
            if len(seen) >= MAX_CLAIMS:
                return


def _sentence(source: str, links: list[Link], link: Link) -> tuple[str, bool]:
    """The sentence around `link`, links shown as their labels, and whether it says
    anything besides its links."""
    begin = 0
    for match in _SENTENCE_END.finditer(source, 0, link.start):
        begin = match.end()
    stop = _SENTENCE_END.search(source, link.end)
    end = stop.start() if stop else len(source)
    shown, bare, at = [], [], begin
    for other in sorted(links, key=lambda item: item.start):
        if other.start < begin or other.end > end:
            continue
        shown.append(source[at : other.start])
        bare.append(source[at : other.start])
        label = source[other.start + 1 : other.label_end] if other.label_end > other.start else ""
        shown.append(label or other.href)
        at = other.end
    shown.append(source[at:end])
    bare.append(source[at:end])
    text = " ".join(_ESCAPE.sub(r"\1", "".join(shown)).split())[:CLAIM_CHARS]
    return text, bool(_WORD.search("".join(bare)))


def _passage(registry: SourceRegistry, href: str) -> str | None:
    source = registry.lookup(href)
    if source is None:
        return None
    retrieved = source.retrieved
    directive_part = split_fragment(href)[1].partition(DIRECTIVE_DELIMITER)[2]
    try:
        directives = parse_directives(directive_part) if directive_part else []
    except FragmentError:
        directives = []
    for directive in directives:
        span = retrieved.locate(directive)
        if span is not None:
            # Around the quoted words, in the normalised (case-folded) text they were found in.
            middle = (span[0] + span[1]) // 2
            begin = max(0, middle - PASSAGE_CHARS // 2)
            return retrieved.normalised[begin : begin + PASSAGE_CHARS]
    return retrieved.text[:PASSAGE_CHARS]


class NoQuestionError(ValueError):
    """Neither the inputs nor the saved output say what was asked; the judge scores `None`."""


def question_of(inputs: Mapping[str, Any] | None, outputs: Mapping[str, Any]) -> str:
    for holder in (inputs or {}, outputs):
        question = holder.get("question")
        if isinstance(question, str):
            return question
    raise NoQuestionError("no question to judge against (inputs or outputs 'question')")
