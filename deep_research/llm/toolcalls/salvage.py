"""Finding calls written as text, by the salvage rule in the package docstring."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from langchain_core.messages import ToolCall
from pydantic import BaseModel, ValidationError

from deep_research.llm.toolcalls.blocks import blocks, indented_as_code
from deep_research.llm.toolcalls.parse import (
    CallSpan,
    as_arguments,
    make_call,
    read_call,
    tool_name,
)

log = logging.getLogger(__name__)

# Room for a sentence such as "I'll research these two topics:", never for a report.
MAX_PROSE_CHARS = 400
_LINE_START = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:[-*]|\d+[.)])[ \t]+)?(?=<tool_call>|[{\[]|[A-Za-z_][\w.]*[ \t]*\()",
    re.MULTILINE,
)
_SEPARATOR = re.compile(r"[ \t]*[,;]?[ \t]*")


@dataclass(frozen=True)
class Salvaged:
    """Calls recovered from a reply's text, and the text left to show."""

    calls: list[ToolCall]
    text: str


def salvage(text: str, tools: Sequence[type[BaseModel]]) -> Salvaged:
    """Tool calls written as text in `text`, in written order, by the package's rule."""
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
        args = arguments if isinstance(arguments, dict) else as_arguments(arguments)
        try:
            offered[name].model_validate(args)
        except ValidationError as error:
            # Still a call: its tool answers with the error and a one-line example.
            log.warning("salvaged %s call has invalid arguments: %s", name, error)
        calls.append(make_call(name, args, None))
    return Salvaged(calls, prose)


def _hits(text: str, offered: set[str]) -> Iterator[CallSpan]:
    """Spans holding calls to offered tools, at top level or inside ```json fences."""
    position = 0
    for block in blocks(text):
        yield from _scan(text, position, block.start, offered)
        if block.body is not None:
            inside = list(_scan(text, *block.body, offered, in_fence=True))
            if inside:
                # The fence's own lines go with the calls it holds.
                yield CallSpan(block.start, block.body[0], [])
                yield from inside
                yield CallSpan(block.body[1], block.end, [])
        position = block.end
    yield from _scan(text, position, len(text), offered)


def _scan(
    text: str, start: int, end: int, offered: set[str], in_fence: bool = False
) -> Iterator[CallSpan]:
    position = start
    while (line := _LINE_START.search(text, position, end)) is not None:
        if not in_fence and indented_as_code(line.group("indent")):
            # An indented code block quotes; inside a call fence, indentation is layout.
            line_end = text.find("\n", line.end(), end)
            position = end if line_end < 0 else line_end
            continue
        hit = read_call(text, line.end(), end)
        if hit is None:
            position = line.end() + 1
            continue
        hit = CallSpan(line.start(), hit.end, hit.calls)
        # Further calls on the same line, separated by nothing but a comma or semicolon.
        while hit is not None:
            position = hit.end
            if not any(name in offered for name, _ in hit.calls):
                break  # text shaped like a call to something else: skip all of it
            yield hit
            gap = _SEPARATOR.match(text, position, end)
            following = read_call(text, gap.end(), end) if gap and gap.end() < end else None
            hit = CallSpan(position, following.end, following.calls) if following else None


def _cut(text: str, hits: list[CallSpan]) -> str:
    kept, position = [], 0
    for hit in sorted(hits, key=lambda h: h.start):
        kept.append(text[position : hit.start])
        position = max(position, hit.end)
    kept.append(text[position:])
    return re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip()
