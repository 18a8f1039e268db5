"""Chunks sized for MiniLM: it reads the first 256 tokens of a text and ignores the rest.

The splitter counts with the tokenizer of the model already loaded for relevance, so no
second model (and no download: langchain's sentence-transformers splitter would fetch one
from the hub) is needed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from langchain_text_splitters import RecursiveCharacterTextSplitter, TextSplitter

from deep_research.embedding import embedder
from deep_research.memory.reading import reading_sections

# [CLS] and [SEP] take two of the model's 256 positions.
SPECIAL_TOKENS = 2
OVERLAP_TOKENS = 32
# The most sections a report's pieces are cut by (`report_chunks`): a report written in
# parts has 14 (its title, 12 sections, the conclusion) and what else its frame heads.
MAX_SECTIONS = 24

# A run's report and cited pages are split up to three times (embedded early by
# `memory.preparing`, the report again as `finalize` checks it, both by `remember`, the
# run's last step): the latest splits are kept until `remember` takes them, up to this many
# characters of text (their pieces, with the overlaps, about as many again), each entry
# counted `ENTRY_CHARS` more (many short texts cost their dict entries and tuples).
KEPT_CHARS = 2_000_000
ENTRY_CHARS = 256

_splitter: TextSplitter | None = None
_splitter_lock = threading.Lock()
_kept: OrderedDict[str, tuple[str, ...]] = OrderedDict()
_kept_by: TextSplitter | None = None  # the splitter that cut what is kept
_kept_chars = 0
_kept_lock = threading.Lock()


def splitter() -> TextSplitter:
    """The process-wide token-aware splitter (blocking: loads MiniLM on first use)."""
    global _splitter
    with _splitter_lock:
        if _splitter is None:
            model = embedder()
            _splitter = RecursiveCharacterTextSplitter(
                chunk_size=model.window - SPECIAL_TOKENS,
                chunk_overlap=OVERLAP_TOKENS,
                length_function=model.token_count,
            )
        return _splitter


def split(text: str) -> list[str]:
    """`text` in pieces of at most one MiniLM window each (blocking)."""
    return _pieces(splitter(), text)


def _pieces(cutter: TextSplitter, text: str) -> list[str]:
    return [piece for piece in cutter.split_text(text) if piece.strip()]


def token_count(text: str) -> int:
    """How many tokens `text` is, as the splitter counts them (blocking: loads MiniLM)."""
    return embedder().token_count(text)


def kept_split(text: str, *, last: bool = False) -> list[str]:
    """`split(text)`, kept for the next asker of the same text (see `KEPT_CHARS`), or with
    `last` let go: a run's report and pages; a library's documents, each split once, go
    through `split` alone."""
    global _kept_by, _kept_chars
    cutter = splitter()
    with _kept_lock:
        if _kept_by is not cutter:  # another model's window: nothing kept is its
            _kept.clear()
            _kept_by, _kept_chars = cutter, 0
        if (pieces := _kept.pop(text, None)) is not None:
            if last:
                _kept_chars -= len(text) + ENTRY_CHARS
            else:
                _kept[text] = pieces  # now the latest asked
            return list(pieces)
    pieces = tuple(_pieces(cutter, text))
    if last or len(text) > KEPT_CHARS // 8:
        return list(pieces)
    with _kept_lock:
        if _kept_by is cutter and text not in _kept:
            _kept[text] = pieces
            _kept_chars += len(text) + ENTRY_CHARS
        while _kept_chars > KEPT_CHARS:
            gone, _ = _kept.popitem(last=False)
            _kept_chars -= len(gone) + ENTRY_CHARS
    return list(pieces)


def report_chunks(report: str, *, last: bool = False) -> list[str]:
    """The pieces of `report` memory embeds: as read (`reading.py`), each section split on
    its own, so the pieces of a part written early (a section of a report written in parts)
    are the published report's too; a report of more than `MAX_SECTIONS` sections (none
    written in parts has) is split whole, so headings cannot multiply its pieces (blocking:
    counts MiniLM tokens); `last`: its splits are let go (`kept_split`)."""
    sections = reading_sections(report)
    if len(sections) > MAX_SECTIONS:
        return kept_split("\n\n".join(sections), last=last)
    return [piece for section in sections for piece in kept_split(section, last=last)]
