"""In a terminal, after a report: the follow-up questions typed at the prompt, one at a time.

Each is asked on the finished thread as `deep-research --follow-up THREAD "question"` would
ask it; Enter on an empty line, Ctrl-D or Ctrl-C ends the session with the report kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from deep_research.cli.args import readable
from deep_research.cli.plain import plain

if TYPE_CHECKING:
    from rich.console import Console

# Follow-ups one terminal session asks at most; past it, `--follow-up` still asks more.
MAX_FOLLOW_UPS = 20
PROMPT = "follow-up> "


def offer(thread_id: str) -> str:
    """The line under a report's summary: how to ask more, now and later."""
    return (
        "Ask more about it: type a follow-up question (Enter to finish), or later: "
        f'deep-research --follow-up {thread_id} "…"'
    )


def questions(console: Console, thread_id: str) -> Iterator[str]:
    """Each follow-up question typed after the report (the caller runs each before the next
    is read), until an empty line, Ctrl-D, Ctrl-C or `MAX_FOLLOW_UPS`."""
    for _ in range(MAX_FOLLOW_UPS):
        console.print(plain(offer(thread_id)))
        try:
            line = readable(console.input(PROMPT)).strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not line:
            return
        yield line
    console.print(
        plain(f"That was {MAX_FOLLOW_UPS} follow-ups in one session; ask more with --follow-up.")
    )
