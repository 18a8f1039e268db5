"""A report as its reader reads it: the text memory embeds for a published report.

A rendered report links every claim to its passage with a text-fragment URL, dozens of
tokens of percent-encoding each, and ends with the Sources list, one URL per line: for
all-MiniLM-L6-v2, which reads 256 tokens of a chunk, these are half a report's tokens and
say nothing about its subject. The cited pages are stored on their own, under their URLs.
"""

from __future__ import annotations

import re

from deep_research.citations.hygiene import numbered_prefix
from deep_research.citations.markdown import parse, plain_text
from deep_research.text.language import HEADINGS

# The list `finalize` appends (citations.hygiene.sources_section), headed in the report's
# language; a model's own Sources section was removed by the citation check before that.
SOURCES_HEADINGS = tuple(f"\n## {table['sources']}\n" for table in HEADINGS.values())
# One of its entries: "1. [Title](url)", with " (retrieved 2026-11-30)" when dated.
_ENTRY = re.compile(r"\d+\. \[.*\)")
# Bare URLs left in the text (a link whose label is its URL, an autolink): no space in
# one, and the sentence's punctuation after it is not part of it. Bounded repeats: on a
# hostile run of letters or of "a://" an unbounded one backtracks in quadratic time.
_URL = re.compile(r"(?:\b[a-z][a-z0-9+.-]{0,31}://|\bwww\.)\S{0,2048}[^\s.,;:!?)\]]", re.IGNORECASE)
_SPACES = re.compile(r"[^\S\n]+")
# The headings a report written in parts is stitched at (title, sections, conclusion).
SPLIT_AT = ("h1", "h2")


def reading_sections(report: str) -> list[str]:
    """`report` as read, without its link targets, bare URLs and closing Sources list, each
    block (heading, paragraph, list item, table cell row, code) a paragraph of its own, cut
    before each `#` and `##` heading that follows some text (the boundaries a report written
    in parts has: its title, each section, the conclusion): a section's text does not depend
    on the sections around it, so memory can embed each part of a report as it is written
    (`memory.preparing.prepare_part`) and find it again in the published report. Deeper
    headings stay in their section, and a heading with no text before the next one goes with
    that one: a bare heading is never a piece of its own."""
    body = report
    cut, heading = max((report.rfind(heading), heading) for heading in SOURCES_HEADINGS)
    if cut >= 0:
        # Only that list: a report citing nothing has none, and a section of prose the
        # writer headed "Sources" (kept by the citation check) is content.
        entries = report[cut + len(heading) :].strip().splitlines()
        if entries and all(_ENTRY.fullmatch(line) for line in entries):
            body = report[:cut]
    sections: list[list[str]] = [[]]
    in_heading = has_body = False  # the current section holds more than headings
    for token in parse(body):
        if token.type == "heading_open":
            # Only the report's own headings: not one quoted or in a list item.
            if token.tag in SPLIT_AT and token.level == 0 and has_body:
                sections.append([])
                has_body = False
            in_heading = True
        elif token.type == "heading_close":
            in_heading = False
        elif token.type in ("inline", "fence", "code_block", "html_block") and not in_heading:
            has_body = True
        if token.type == "inline":
            text = plain_text(token.children or [])
            # "## 2. Costs" reads "Costs", as the published report shows it (the citation
            # check drops section numbers), whether this is the report or a part of it.
            sections[-1].append(text[numbered_prefix(text) :] if in_heading else text)
        elif token.type in ("fence", "code_block"):
            sections[-1].append(token.content)
    if not has_body and len(sections) > 1:  # a bare heading last goes with the section before
        last = sections.pop()
        sections[-1] += last
    cleaned = ([_clean(block) for block in blocks] for blocks in sections)
    joined = ("\n\n".join(block for block in blocks if block) for blocks in cleaned)
    return [section for section in joined if section]


def _clean(block: str) -> str:
    return _SPACES.sub(" ", _URL.sub("", block)).strip()
