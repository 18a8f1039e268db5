"""Small-model tool calls: calls written as text, `<think>` blocks, broken arguments.

Salvage rule (what may become a call; DESIGN.md explains why):

1. Only the model's own reply is read, and only when it carries no native tool call.
   Tool results, pages and earlier messages are never parsed.
2. A call starts a line (an optional `-`, `*` or `1.` list marker aside), outside quotes
   and code: a call inside a blockquote, inline code, quotation marks, a `<think>` block
   or a code fence other than ```json / ```tool_call is text.
3. The reply must be essentially calls: once they are cut out, at most `MAX_PROSE_CHARS`
   of prose may remain. A report that quotes a call stays a report.
4. Only the tools offered in this very turn are accepted.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import json_repair
from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

# Room for a sentence such as "I'll research these two topics:", never for a report.
MAX_PROSE_CHARS = 400
# Arguments that json-repair could not turn into an object are passed on under this key,
# so the tool rejects the call with a one-line example and the raw text stays visible.
UNPARSED = "unparsed_arguments"
CALL_FENCES = {"", "json", "tool_call"}

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(
    r"^[ \t]*```[ \t]*([\w-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE
)
_LINE_START = re.compile(
    r"^[ \t]*(?:(?:[-*]|\d+[.)])[ \t]+)?(?=<tool_call>|[{\[]|[A-Za-z_][\w.]*[ \t]*\()",
    re.MULTILINE,
)
_NAMED = re.compile(r"([A-Za-z_][\w.]*)[ \t]*\(\s*(?=\{)")
_CLOSE_PAREN = re.compile(r"\s*\)")
_SEPARATOR = re.compile(r"[ \t]*[,;]?[ \t]*")
_NAME_KEYS = ("tool", "name", "function", "tool_name")
_ARGS_KEYS = ("args", "arguments", "parameters", "input")


@dataclass(frozen=True)
class Salvaged:
    """Calls recovered from a reply's text, and the text left to show."""

    calls: list[ToolCall]
    text: str


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    calls: list[tuple[str, Any]]


def tool_name(tool: type[BaseModel]) -> str:
    """The name a tool is offered under, exactly as `bind_tools` sends it."""
    return str(convert_to_openai_tool(tool)["function"]["name"])


def strip_think(text: str) -> str:
    """The reply without reasoning: `<think>` blocks, or everything before a lone `</think>`."""
    text = _THINK.sub("", text)
    # Some templates open the block in the prompt, so the reply holds only its end.
    _, closed, after = text.partition("</think>")
    return (after if closed else text).strip()


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
    """A native call whose arguments were not valid JSON, repaired by json-repair if it can.

    Unrepairable arguments still make a call (under `UNPARSED`): its tool answers it with a
    validation error and a one-line example, and every call in the history gets an answer.
    """
    raw = bad.get("args") or ""
    args = _as_arguments(raw)
    log.warning(
        "tool call %s had invalid JSON arguments %r; %s",
        bad.get("name"),
        raw[:200],
        "passed on unparsed" if UNPARSED in args else "repaired",
    )
    return _call(bad.get("name") or "", args, bad.get("id"))


def salvage(text: str, tools: Sequence[type[BaseModel]]) -> Salvaged:
    """Tool calls written as text in `text`, in written order, by the rule in this module's doc."""
    offered = {tool_name(tool): tool for tool in tools}
    hits = list(_hits(text, set(offered)))
    if not hits:
        return Salvaged([], text)
    prose = _cut(text, hits)
    if len(prose) > MAX_PROSE_CHARS:
        log.info("call-shaped text inside a %d-character reply was left as text", len(prose))
        return Salvaged([], text)
    calls = []
    for name, arguments in (call for hit in hits for call in hit.calls):
        if name not in offered:
            log.warning("ignored a text call to %r: not offered this turn", name)
            continue
        args = arguments if isinstance(arguments, dict) else _as_arguments(arguments)
        try:
            offered[name].model_validate(args)
        except ValidationError as error:
            # Still a call: its tool answers with the error and a one-line example.
            log.warning("salvaged %s call has invalid arguments: %s", name, error)
        calls.append(_call(name, args, None))
    return Salvaged(calls, prose)


def invalid_arguments(args: dict[str, Any], error: ValidationError) -> str:
    """The first problem with a call's arguments, in one line, for a tool error message."""
    if UNPARSED in args:
        return "Invalid arguments: they were not valid JSON."
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"Invalid arguments: {where + ': ' if where else ''}{first['msg']}."


def _hits(text: str, offered: set[str]) -> Iterator[_Hit]:
    """Spans holding calls to offered tools, at top level or inside ```json fences."""
    position = 0
    for fence in _FENCE.finditer(text):
        yield from _scan(text, position, fence.start(), offered)
        if fence.group(1).lower() in CALL_FENCES:
            inside = list(_scan(text, fence.start(2), fence.end(2), offered))
            if inside:
                # The fence's own lines go with the calls it holds.
                yield _Hit(fence.start(), fence.start(2), [])
                yield from inside
                yield _Hit(fence.end(2), fence.end(), [])
        position = fence.end()
    yield from _scan(text, position, len(text), offered)


def _scan(text: str, start: int, end: int, offered: set[str]) -> Iterator[_Hit]:
    position = start
    while (line := _LINE_START.search(text, position, end)) is not None:
        hit = _read(text, line.end(), end)
        if hit is None:
            position = line.end() + 1
            continue
        hit = _Hit(line.start(), hit.end, hit.calls)
        # Further calls on the same line, separated by nothing but a comma or semicolon.
        while hit is not None:
            position = hit.end
            if not any(name in offered for name, _ in hit.calls):
                break  # text shaped like a call to something else: skip all of it
            yield hit
            gap = _SEPARATOR.match(text, position, end)
            following = _read(text, gap.end(), end) if gap and gap.end() < end else None
            hit = _Hit(position, following.end, following.calls) if following else None


def _read(text: str, at: int, end: int) -> _Hit | None:
    """The call starting exactly at `at`, in any of the three written forms."""
    if text.startswith("<tool_call>", at):
        body = at + len("<tool_call>")
        close = text.find("</tool_call>", body, end)
        stop = close if close >= 0 else end
        finish = close + len("</tool_call>") if close >= 0 else end
        return _Hit(at, finish, _calls_in(_loads(text[body:stop])))
    if text.startswith(("{", "["), at):
        # A JSON value that is not a call is skipped whole: nothing inside it is top level.
        stop = _object_end(text, at, end)
        return _Hit(at, stop, _calls_in(_loads(text[at:stop])))
    named = _NAMED.match(text, at, end)
    if named is None:
        return None
    stop = _object_end(text, named.end(), end)
    paren = _CLOSE_PAREN.match(text, stop, end)
    name = named.group(1).rsplit(".", 1)[-1]  # "functions.research(" names research
    return _Hit(at, paren.end() if paren else stop, [(name, text[named.end() : stop])])


def _object_end(text: str, start: int, end: int) -> int:
    """Just past the JSON object or array opening at `start`; `end` when it is truncated."""
    depth, quote, escaped, previous = 0, "", False, ""
    for index in range(start, end):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        # A single quote opens a string only where JSON expects a value: not "it's".
        elif char == '"' or (char == "'" and previous in "{[,:"):
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
        if not char.isspace():
            previous = char
    return end


def _calls_in(value: Any) -> list[tuple[str, Any]]:
    """(name, arguments) of call objects: {"tool"|"name": ..., "args"|"arguments": ...}."""
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict):
            continue
        function = item.get("function")
        if isinstance(function, dict):  # the OpenAI wire shape, written out as text
            item = function
        name = next((item[key] for key in _NAME_KEYS if isinstance(item.get(key), str)), None)
        if name is None:
            continue
        arguments = next((item[key] for key in _ARGS_KEYS if key in item), None)
        if arguments is None:  # {"tool": "research", "topic": "..."}
            arguments = {k: v for k, v in item.items() if k not in _NAME_KEYS}
        calls.append((name, arguments))
    return calls


def _as_arguments(raw: Any) -> dict[str, Any]:
    parsed = _loads(raw) if isinstance(raw, str) else raw
    return parsed if isinstance(parsed, dict) else {UNPARSED: str(raw)}


def _loads(raw: str) -> Any:
    """json-repair closes truncated objects, fixes quotes and commas, drops trailing prose."""
    try:
        return json_repair.loads(raw)
    except (ValueError, RecursionError):
        return None


def _cut(text: str, hits: list[_Hit]) -> str:
    kept, position = [], 0
    for hit in sorted(hits, key=lambda h: h.start):
        kept.append(text[position : hit.start])
        position = max(position, hit.end)
    kept.append(text[position:])
    return re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip()


def _call(name: str, args: dict[str, Any], call_id: str | None) -> ToolCall:
    return ToolCall(
        name=name, args=args, id=call_id or f"call_{uuid.uuid4().hex[:24]}", type="tool_call"
    )
