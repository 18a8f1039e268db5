"""The report in sections, on paper: what each section's writer and the frame's writer are
sent, and their replies stitched into one report (title, opening, sections, conclusion).

Pure text work, no calls: `report_sections` decides when and sends. A section's prompt holds
its own researcher's findings only, cut to the share of `FINDINGS_CHARS` the single call
would have given them; the frame's holds a short digest of each, so the calls together read
no more than the one report call they replace.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from markdown_it.token import Token

from deep_research.citations.markdown import close_open_blocks, parse
from deep_research.config.report_lengths import LENGTHS, ReportLength
from deep_research.llm import attempts
from deep_research.runtime import prompts
from deep_research.text import fences, limits

# What the frame reads of each topic's findings, and of the reader's request.
DIGEST_CHARS = 240
REQUEST_CHARS = 4_000
TOPIC_CHARS = 200
# The frame's share of the report's words; the sections share the rest.
FRAME_SHARE = 0.2
LINKED = re.compile(r"\[([^\]\n]{0,300})\]\((?:[^()\s]|\([^()\s]*\))*\)")
# The markers of the quotes and list items a line's block is in, and its indent.
CONTAINERS = r"(?:[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)))*[ \t]*"
# An ATX `#` heading's mark, after those markers.
TOP_HEADING = re.compile(rf"^({CONTAINERS})#(?=[ \t]|$)")
CONTAINER_MARKS = re.compile(CONTAINERS)
CARRIAGE_RETURN = re.compile(r"\r\n?")


class Part(NamedTuple):
    """One researcher's topic and its findings (web text: fenced wherever it is sent)."""

    topic: str
    findings: str


def words(length: ReportLength, sections: int) -> tuple[int, int]:
    """About how many words each section and the frame are asked for: the report's middle
    length, a fifth for the frame and the rest shared by the sections."""
    low, high = LENGTHS[length].words
    middle = (low + high) / 2
    frame = max(60, round(middle * FRAME_SHARE))
    return max(80, round((middle - frame) / max(1, sections))), frame


def section_messages(
    part: Part, findings: str, request: str, language: str, words: int
) -> list[BaseMessage]:
    """One section's call: its topic and findings (cut by the caller), and the request.

    Every part's call opens with the same system prompt and request, so a one-slot server
    that keeps its last prompt cached reads them once for all the parts."""
    task = prompts.render("report_section", topic=_one_line(part.topic), words=words)
    nonce = fences.new_nonce()
    body = f"User: {request}\n\n{task}\n{fences.fence(findings, nonce)}"
    return [SystemMessage(prompts.render("report_part", language=language)), HumanMessage(body)]


def frame_messages(parts: list[Part], request: str, language: str, words: int) -> list[BaseMessage]:
    """The frame's call: the request and a digest of each topic's findings, in one fence."""
    task = prompts.render("report_frame", words=words)
    digests = "\n\n".join(
        f"Topic: {_one_line(part.topic)}\n{digest(part.findings)}" for part in parts
    )
    body = f"User: {request}\n\n{task}\n{fences.fence(digests, fences.new_nonce())}"
    return [SystemMessage(prompts.render("report_part", language=language)), HumanMessage(body)]


def digest(findings: str) -> str:
    """The start of a topic's findings, its links reduced to their words."""
    plain = LINKED.sub(r"\1", fences.unfence(findings[: DIGEST_CHARS * 8]))
    return limits.cut(" ".join(plain.split()), DIGEST_CHARS)


def request_of(question: str, last_user: str) -> str:
    """The reader's request: the question and, when it is another text, the last user reply
    (the answers to the clarifying questions)."""
    text = question.strip()
    if last_user.strip() and last_user.strip() != text:
        text = f"{text}\n\n{last_user.strip()}" if text else last_user.strip()
    return limits.cut(text, REQUEST_CHARS)


def section_text(reply: AIMessage, topic: str) -> str:
    """A section's reply as a section: one `##` heading first (the topic's when it wrote
    none), no `#` title of its own."""
    text = _line_ends(reply.text.strip())
    tokens = parse(text)
    body = close_open_blocks(_joined(_demote(text.split("\n"), tokens)))
    if not _opens_with_heading(tokens):
        body = f"## {_one_line(topic)}\n\n{body}"
    return body


def _opens_with_heading(tokens: list[Token]) -> bool:
    """Whether the parsed text starts with a `#` or `##` heading of some words, a `##` one
    once demoted (a `#hashtag`, a `###` or an empty heading first is not a section's)."""
    return bool(
        len(tokens) > 1
        and tokens[0].type == "heading_open"
        and tokens[0].tag in ("h1", "h2")
        and tokens[0].map
        and tokens[0].map[0] == 0
        and tokens[1].content.strip()
    )


def stitched(
    frame: AIMessage, sections: list[AIMessage], topics: list[str], title: str
) -> AIMessage:
    """One report: the frame's title and opening, the sections in the plan's order, then
    the frame's conclusion (its last `##` heading on). A reply cut at its limit marks the
    report as cut, as a single call's would be."""
    opening, conclusion, own_title = _frame_parts(frame.text.strip())
    body = [f"# {own_title or _one_line(title)}"]
    body += [opening] if opening else []
    body += [section_text(s, t) for s, t in zip(sections, topics, strict=True)]
    body += [conclusion] if conclusion else []
    cut = [reply for reply in [frame, *sections] if attempts.is_cut(reply)]
    metadata = dict(cut[0].response_metadata) if cut else {"finish_reason": "stop"}
    return AIMessage("\n\n".join(body), response_metadata=metadata)


def frame_text(frame: AIMessage, title: str) -> str:
    """The frame's reply as `stitched` places it: the title and opening, then the conclusion
    (memory embeds it while the sections are still being written)."""
    opening, conclusion, own_title = _frame_parts(frame.text.strip())
    body = [f"# {own_title or _one_line(title)}", opening, conclusion]
    return "\n\n".join(part for part in body if part)


def _frame_parts(text: str) -> tuple[str, str, str]:
    """The frame's opening, conclusion (from its last `#` or `##` heading after its title)
    and title (its first `#` heading). Headings are the Markdown parser's, never a line of
    a code block that starts with `#` (a shell comment)."""
    text = _line_ends(text)
    lines = text.split("\n")
    tokens = parse(text)
    demoted = _demote(lines, tokens)
    headings = [
        (token.tag, token.map, tokens[index + 1].content.strip())
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.level == 0 and token.map
    ]
    title, dropped = "", set[int]()
    if titles := [(where, named) for tag, where, named in headings if tag == "h1" and named]:
        (start, end), named = titles[0]
        title, dropped = _one_line(named), set(range(start, end))
    # No second title: empty headings go, and any other `#` heading becomes a `##` one.
    dropped |= {n for _, (start, end), named in headings if not named for n in range(start, end)}
    starts = [
        where[0]
        for tag, where, named in headings
        if tag in ("h1", "h2") and named and where[0] not in dropped
    ]
    end = starts[-1] if starts else len(lines)

    def placed(numbers: range) -> str:
        kept = [n for n in numbers if n not in dropped]
        return _blank_trimmed(_joined([demoted[n] for n in kept]))

    opening, conclusion = placed(range(end)), placed(range(end, len(lines)))
    return close_open_blocks(opening), close_open_blocks(conclusion), title


def _demote(lines: list[str], tokens: list[Token]) -> list[str | None]:
    """`lines` (of the parsed text) with each `#` heading made a `##` one, as the parser
    reads headings, in a quote or a list item too: an ATX one's mark, a setext one rewritten
    as ATX on its first line, its other lines None (dropped when joined: a blank line would
    end a quote or loosen a list). A `#` line in a code block or raw HTML is no heading and
    stays as it is. Line numbers stay those of `lines`."""
    demoted: list[str | None] = list(lines)
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.tag != "h1" or not token.map:
            continue
        start, end = token.map
        line = lines[start]
        if token.markup == "#":
            demoted[start] = TOP_HEADING.sub(r"\1##", line, count=1)
            continue
        # Setext (a `---` under `|a|` would be a table's, so never that): the heading's
        # text ends its first line, after the markers of what it is in.
        content = tokens[index + 1].content
        first = content.split("\n")[0].strip(" \t")
        shown = line.rstrip(" \t")
        if first and shown.endswith(first):
            prefix = shown[: len(shown) - len(first)]
        else:
            prefix = match.group(0) if (match := CONTAINER_MARKS.match(line)) else ""
        demoted[start] = f"{prefix}## {' '.join(content.split())}"
        demoted[start + 1 : end] = [None] * (end - start - 1)
    return demoted


def _joined(lines: list[str | None]) -> str:
    return "\n".join(line for line in lines if line is not None)


def _blank_trimmed(text: str) -> str:
    """`text` without its leading blank lines and trailing whitespace: the first line keeps
    its indent (an indented code block's `    # x` is no heading)."""
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip()


def _line_ends(text: str) -> str:
    """`text` with every line ending `\n`: the parser ends a line at `\r` and `\r\n` too, and
    its line numbers index `text.split("\n")` only then (a lone `\r` would shift them)."""
    return CARRIAGE_RETURN.sub("\n", text)


def _one_line(text: str) -> str:
    return limits.cut(" ".join(text.split()), TOPIC_CHARS)
