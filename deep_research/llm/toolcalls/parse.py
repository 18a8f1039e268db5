"""Reading one call in the forms small models write: `name({...})`, JSON, `<tool_call>`."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

import json_repair
from langchain_core.messages import ToolCall
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

# Arguments that json-repair could not turn into an object are passed on under this key,
# so the tool rejects the call with a one-line example and the raw text stays visible.
UNPARSED = "unparsed_arguments"

_NAMED = re.compile(r"([A-Za-z_][\w.]*)[ \t]*\(\s*(?=\{)")
_CLOSE_PAREN = re.compile(r"\s*\)")
_NAME_KEYS = ("tool", "name", "function", "tool_name")
_ARGS_KEYS = ("args", "arguments", "parameters", "input")


@dataclass(frozen=True)
class CallSpan:
    """A span of the reply holding (name, arguments) pairs; empty for a fence's own lines."""

    start: int
    end: int
    calls: list[tuple[str, Any]]


def tool_name(tool: type[BaseModel]) -> str:
    """The name a tool is offered under, exactly as `bind_tools` sends it."""
    return str(convert_to_openai_tool(tool)["function"]["name"])


def read_call(text: str, at: int, end: int) -> CallSpan | None:
    """The call starting exactly at `at`, in any of the three written forms."""
    if text.startswith("<tool_call>", at):
        body = at + len("<tool_call>")
        close = text.find("</tool_call>", body, end)
        stop = close if close >= 0 else end
        finish = close + len("</tool_call>") if close >= 0 else end
        return CallSpan(at, finish, _calls_in(loads(text[body:stop])))
    if text.startswith(("{", "["), at):
        # A JSON value that is not a call is skipped whole: nothing inside it is top level.
        stop = _object_end(text, at, end)
        return CallSpan(at, stop, _calls_in(loads(text[at:stop])))
    named = _NAMED.match(text, at, end)
    if named is None:
        return None
    stop = _object_end(text, named.end(), end)
    paren = _CLOSE_PAREN.match(text, stop, end)
    name = named.group(1).rsplit(".", 1)[-1]  # "functions.research(" names research
    return CallSpan(at, paren.end() if paren else stop, [(name, text[named.end() : stop])])


def as_arguments(raw: Any) -> dict[str, Any]:
    """`raw` as an arguments object, or the raw text under `UNPARSED`."""
    parsed = loads(raw) if isinstance(raw, str) else raw
    return parsed if isinstance(parsed, dict) else {UNPARSED: str(raw)}


def loads(raw: str) -> Any:
    """json-repair closes truncated objects, fixes quotes and commas, drops trailing prose."""
    try:
        return json_repair.loads(raw)
    except (ValueError, RecursionError):
        return None


def make_call(name: str, args: dict[str, Any], call_id: str | None) -> ToolCall:
    """A LangChain tool call, with a fresh id when the model gave none."""
    return ToolCall(
        name=name, args=args, id=call_id or f"call_{uuid.uuid4().hex[:24]}", type="tool_call"
    )


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
