"""The plan review in a terminal: show the plan, read `y`, an edited plan, or feedback.

The graph checks the value (`deep_research.nodes.plan_review.read_review`); one it refuses comes
back as a new interrupt with an `error`, which is shown before the plan is asked about
again. An edited plan is written in `$EDITOR` when it is set, else typed line by line.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from deep_research.cli.plain import plain
from deep_research.cli.view import TODO_MARKS

# What an editor may leave in the file: far more than a plan of 20 items of 500 characters.
EDITED_CHARS = 100_000
HEADER = (
    "# The plan, one item per line. Lines starting with # are ignored.\n"
    "# Save and quit to run it; delete every line to keep the plan as it was.\n"
)
PROMPT = "Run this plan? y (or Enter): run it · e: edit it · anything else: what to change"


def show(console: Console, request: dict[str, Any]) -> None:
    """The plan (model output, so shown as plain text) and the graph's error, if any."""
    if request.get("error"):
        console.print(plain(request["error"], style="red"))
    heading = f"The research plan, for your review (round {request.get('round', 1)}):"
    console.print(Text.assemble("\n", plain(heading, style="bold")))
    for number, item in enumerate(request.get("plan") or [], start=1):
        mark = TODO_MARKS.get(str(item.get("status")), "[ ]")
        console.print(Text(f"  {number}. {mark} ").append_text(plain(item.get("content", ""))))


async def ask(console: Console, request: dict[str, Any], interactive: bool) -> Any:
    """The resume value for one plan review: "ok", a list of strings, or {"feedback": …}."""
    show(console, request)
    if not interactive:
        console.print("stdin is not a terminal, so nobody can review the plan; it runs as is.")
        return "ok"
    while True:
        console.print(PROMPT)
        try:
            # Reading stdin blocks, so it runs in a thread and the event loop stays free.
            answer = (await asyncio.to_thread(console.input, "> ")).strip()
        except EOFError:
            return "ok"
        if answer.lower() in ("", "y", "yes", "ok"):
            return "ok"
        if answer.lower() not in ("e", "edit"):
            return {"feedback": answer}
        items = await _edit(console, [str(i.get("content", "")) for i in request.get("plan") or []])
        if items:
            return items
        console.print("The plan is unchanged.")


async def _edit(console: Console, items: list[str]) -> list[str]:
    """The edited plan's lines; empty when the user kept it as it was or the editor failed."""
    editor = os.environ.get("EDITOR", "").strip()
    if not editor:
        console.print("Type the new plan, one item per line; an empty line ends it.")
        lines: list[str] = []
        while True:
            try:
                line = (await asyncio.to_thread(console.input, f"{len(lines) + 1}. ")).strip()
            except EOFError:
                break
            if not line:
                break
            lines.append(line)
        return lines
    return await asyncio.to_thread(_in_editor, console, editor, items)


def _in_editor(console: Console, editor: str, items: list[str]) -> list[str]:
    handle, name = tempfile.mkstemp(prefix="deep-research-plan-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(HEADER + "".join(f"{item}\n" for item in items))
        try:
            # $EDITOR may hold arguments ("code --wait"), as git and crontab allow.
            done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except (OSError, ValueError) as error:
            console.print(plain(f"Could not start the editor {editor!r}: {error}", style="red"))
            return []
        if done.returncode != 0:
            console.print(plain(f"The editor exited with {done.returncode}.", style="red"))
            return []
        with path.open(encoding="utf-8", errors="replace") as edited:
            text = edited.read(EDITED_CHARS)
    finally:
        path.unlink(missing_ok=True)
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]
