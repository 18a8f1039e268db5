"""Small-model tool calls: calls written as text, `<think>` blocks, broken arguments.

One door in: `settle(reply, tools) -> AIMessage` takes the model's reply and the tool
schemas offered this turn and returns the reply with leading reasoning removed, calls
written as text turned into tool calls (by the rule below), and broken native arguments
repaired or marked invalid; `is_empty(reply)` says whether anything usable is left, and
`invalid_arguments(args, error)` words the tool error a bad call is answered with.

Salvage rule (what may become a call; DESIGN.md explains why):

1. Only the model's own reply is read, and only when it carries no native tool call.
   Tool results, pages and earlier messages are never parsed.
2. A call starts a line (an optional `-`, `*` or `1.` list marker aside), outside quotes
   and code: a call inside a blockquote, inline code, quotation marks, a `<think>` block,
   HTML `<pre>`, `<code>`, `<samp>` or `<blockquote>`, a line indented four columns (an
   indented code block), or any fence but a three-backtick one tagged `json`,
   `tool_call` or nothing, is text (`blocks`). Only reasoning that opens the reply is
   removed first (`think`); a `<think>` further on is quoted text.
3. The reply must be essentially calls: once they are cut out, at most `MAX_PROSE_CHARS`
   of prose may remain. A report that quotes a call stays a report.
4. Only the tools offered in this very turn are accepted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from pydantic import BaseModel, ValidationError

from deep_research.llm.toolcalls.parse import UNPARSED, as_arguments, make_call, tool_name
from deep_research.llm.toolcalls.reasoning import strip_think
from deep_research.llm.toolcalls.salvage import MAX_PROSE_CHARS, Salvaged, salvage

__all__ = [
    "MAX_PROSE_CHARS",
    "UNPARSED",
    "Salvaged",
    "invalid_arguments",
    "is_empty",
    "repair",
    "salvage",
    "settle",
    "strip_think",
    "tool_name",
]

log = logging.getLogger(__name__)


def settle(reply: AIMessage, tools: Sequence[type[BaseModel]]) -> AIMessage:
    """The reply with reasoning removed, broken native calls repaired and text calls salvaged.

    A reply that needs none of that is returned as it came (cloud replies, typically).
    """
    if not isinstance(reply.content, str):
        return reply
    text = strip_think(reply.content)
    calls = list(reply.tool_calls)
    repaired = [repair(bad) for bad in reply.invalid_tool_calls]
    if not calls and not repaired and tools:
        salvaged = salvage(text, tools)
        calls, text = salvaged.calls, salvaged.text
    if text == reply.content and not repaired and calls == reply.tool_calls:
        return reply
    return reply.model_copy(
        update={"content": text, "tool_calls": calls + repaired, "invalid_tool_calls": []}
    )


def is_empty(reply: AIMessage) -> bool:
    """No call and no visible text: what mlx_lm.server returns for a call it could not parse."""
    text = reply.content if isinstance(reply.content, str) else str(reply.content or "")
    return not reply.tool_calls and not reply.invalid_tool_calls and not strip_think(text)


def repair(bad: InvalidToolCall) -> ToolCall:
    """A native call whose arguments were not a JSON object, repaired by json-repair if it can.

    Unrepairable arguments still make a call (under `UNPARSED`): its tool answers it with a
    validation error and a one-line example, and every call in the history gets an answer.
    """
    raw = bad.get("args") or ""
    args = as_arguments(raw)
    log.warning(
        "tool call %s had invalid JSON arguments %r; %s",
        bad.get("name"),
        raw[:200],
        "passed on unparsed" if UNPARSED in args else "repaired",
    )
    return make_call(bad.get("name") or "", args, bad.get("id"))


def invalid_arguments(args: dict[str, Any], error: ValidationError) -> str:
    """The first problem with a call's arguments, in one line, for a tool error message."""
    if UNPARSED in args:
        # Broken JSON, or JSON that is not an object ("heat pumps", [...], 42): both miss this.
        return "Invalid arguments: they must be one JSON object, as in the example."
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"Invalid arguments: {where + ': ' if where else ''}{first['msg']}."
