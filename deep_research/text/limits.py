"""Every size bound in one place, and the cut that marks where text was shortened.

The limits are chosen for a local server with a 32k-token context (llama.cpp `-c 32768`;
Ollama's default is smaller still). English runs at about 4 characters a token, so 32k
tokens hold about 120,000 characters, and the reply needs room too: LLM_MAX_TOKENS keeps
8,192 tokens (~32,000 characters) for it. What is left, ~90,000 characters, has to hold
a system prompt (~4,000) and the history. A request that is still too long for the
server (many turns of research results, a smaller context) is shortened by `shorten`
and sent again: never the same prompt twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, SystemMessage

from deep_research.text.fences import OPENER, closer

# What the user writes: the question and each resume answer. A few paragraphs answer 2-3
# clarifying questions; a pasted 10 MB document would make every later request too long.
USER_TEXT_CHARS = 4_000
# Each clarifier question (and its one-line summary of what will be researched).
QUESTION_CHARS = 500
MAX_QUESTIONS = 3
# A plan the user writes when reviewing one (plan_review.py): items, and each item's size.
MAX_PLAN_ITEMS = 20
PLAN_ITEM_CHARS = 500
# One researcher's report as the orchestrator sees it (~3,000 tokens): a reply's research
# calls (max_research_calls_per_reply, default 6) then add ~72,000 characters at most.
REPORT_CHARS = 12_000
# Everything the report writer gets at the turn cap (~15,000 tokens): with its prompt and
# an 8,192-token reply it fits a 32k context. Each result is cut fairly, none dropped.
FINDINGS_CHARS = 60_000
# A request the server refuses as too long is halved at most this many times.
SHORTEN_ROUNDS = 3
# Contents this short are never cut: halving them saves nothing and loses the meaning.
MIN_CUT_CHARS = 200
# A report to export (deep_research/export/): a real one is ~30,000 characters with its
# Sources; one citing 2,000 pages with text fragments ~475,000, whose PDF takes ~8 s and
# ~300 MB (benchmarks/export.py). Past this a PDF would take minutes and gigabytes, so a
# larger report is refused before any work is done.
EXPORT_CHARS = 1_000_000
# A cut ends at a line or word break when one is this close to the limit.
_BREAK_WINDOW = 200


def _note(removed: int) -> str:
    return f"\n… [cut: {removed:,} more characters]"


def cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, its end replaced by a note saying how much went.

    A data fence opened in what is kept is closed again, so cut web text never runs on
    outside its fence (see `text/fences.py`).
    """
    if len(text) <= limit:
        return text
    # The note for the whole text is at least as long as the real one: the result fits.
    room = limit - len(_note(len(text)))
    if room <= 0:
        return text[:limit]
    head = _head(text, room)
    closers = _closing_lines(head)
    if closers:  # make room for them; a shorter head can only need fewer
        head = _head(text, max(0, room - len(closers)))
        closers = _closing_lines(head)
    return head + closers + _note(len(text) - len(head))


def _head(text: str, room: int) -> str:
    head = text[:room]
    brk = max(head.rfind("\n"), head.rfind(" "))
    if brk >= room - _BREAK_WINDOW and brk > 0:
        head = head[:brk]
    return head.rstrip()


def _closing_lines(head: str) -> str:
    """Closing lines for the data fences `head` opens and does not close."""
    names = [n for n in OPENER.findall(head) if closer(n) not in head]
    return "".join(f"\n{closer(name)}" for name in names)


def fair_share(lengths: Sequence[int], budget: int) -> int:
    """The largest cap such that the lengths, each cut to it, add up to at most `budget`.

    Short texts stay whole and the long ones share what is left equally.
    """
    remaining = max(0, budget)
    ordered = sorted(lengths)
    for index, length in enumerate(ordered):
        share = remaining // (len(ordered) - index)
        if length > share:
            return share
        remaining -= length
    return ordered[-1] if ordered else 0


def fair_cut(texts: Sequence[str], budget: int) -> list[str]:
    """Each text cut to its fair share of `budget` characters: every one keeps its start."""
    cap = fair_share([len(text) for text in texts], budget)
    return [cut(text, cap) for text in texts]


def shorten(messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
    """`messages` with the longest contents cut so their total halves; None if none can be.

    The system prompt is never cut. The cap falls on the longest contents (tool results,
    long answers), so a short question or instruction, such as the last message usually
    is, stays whole. The result is always strictly shorter than `messages`.
    """
    cuttable = [
        i
        for i, message in enumerate(messages)
        if not isinstance(message, SystemMessage)
        and isinstance(message.content, str)
        and len(message.content) > MIN_CUT_CHARS
    ]
    if not cuttable:
        return None
    sizes = [len(str(messages[i].content)) for i in cuttable]
    cap = max(MIN_CUT_CHARS, fair_share(sizes, sum(sizes) // 2))
    shorter = list(messages)
    for i, size in zip(cuttable, sizes, strict=True):
        if size > cap:
            shorter[i] = messages[i].model_copy(
                update={"content": cut(str(messages[i].content), cap)}
            )
    return shorter
