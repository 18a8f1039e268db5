"""The clarifying questions in a terminal: show them, read one line of answer.

The clarifier (`deep_research.nodes.clarify`) asks before researching; a value it cannot read
comes back as a new interrupt with an `error`, which is shown before the questions.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console
from rich.text import Text

from deep_research.cli.plain import plain

NO_ANSWER = "(No answer given; proceed with your best judgement.)"


async def ask(console: Console, request: dict[str, Any], interactive: bool) -> str:
    """The resume value for one round of questions: the line typed, or `NO_ANSWER`."""
    # The questions and the error are model output (or echo it): shown as plain text.
    if request.get("error"):
        console.print(plain(request["error"], style="red"))
    heading = f"Before researching, a few questions (round {request.get('round', 1)}):"
    console.print(Text.assemble("\n", plain(heading, style="bold")))
    for number, question in enumerate(request.get("questions", []), start=1):
        console.print(Text(f"  {number}. ").append_text(plain(question)))
    if interactive:
        console.print("Answer in one line (Enter: let the agent decide).")
        try:
            # Reading stdin blocks, so it runs in a thread and the event loop stays free.
            answer = (await asyncio.to_thread(console.input, "> ")).strip()
        except EOFError:
            answer = ""
    else:
        console.print("stdin is not a terminal, so no answer is read; the agent decides.")
        answer = ""
    return answer or NO_ANSWER
