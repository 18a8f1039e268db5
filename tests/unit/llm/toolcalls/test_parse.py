"""toolcalls.parse: one written call read in each form small models use."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from deep_research.llm.toolcalls.parse import (
    UNPARSED,
    CallSpan,
    as_arguments,
    loads,
    make_call,
    read_call,
    tool_name,
)


def _read(text: str) -> CallSpan | None:
    return read_call(text, 0, len(text))


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ('{"tool": "research", "args": {"topic": "x"}}', [("research", {"topic": "x"})]),
        ('{"name": "search", "arguments": {"q": 1}}', [("search", {"q": 1})]),
        ('{"function": {"name": "f", "arguments": "{}"}}', [("f", "{}")]),
        ('{"tool_name": "t", "parameters": {"a": 2}}', [("t", {"a": 2})]),
        ('{"tool": "research", "topic": "x"}', [("research", {"topic": "x"})]),
        ('[{"name": "a", "input": {}}, {"name": "b", "args": {}}]', [("a", {}), ("b", {})]),
    ],
)
def test_json_calls_in_each_key_spelling(text: str, calls: list[tuple[str, Any]]) -> None:
    assert _read(text) == CallSpan(0, len(text), calls)


def test_a_named_call_keeps_its_raw_arguments_and_closing_paren() -> None:
    text = 'functions.research({"topic": "a (b) c"} ) then prose'
    hit = _read(text)
    assert hit is not None and text[hit.end :] == " then prose"
    assert hit.calls == [("research", '{"topic": "a (b) c"}')]


def test_a_tool_call_tag_closed_or_not() -> None:
    text = '<tool_call>{"name": "a", "arguments": {}}</tool_call>rest'
    assert _read(text) == CallSpan(0, text.index("rest"), [("a", {})])
    open_only = '<tool_call>{"name": "a", "arguments": {"x": 1'
    assert _read(open_only) == CallSpan(0, len(open_only), [("a", {"x": 1})])


def test_json_that_is_not_a_call_is_skipped_whole() -> None:
    text = '{"data": {"name": "not a call"}} after'
    assert _read(text) == CallSpan(0, text.index(" after"), [])


def test_strings_hide_brackets_but_an_apostrophe_in_prose_does_not_open_one() -> None:
    text = '{"tool": "a", "args": {"t": "}]"}} x'
    assert _read(text) == CallSpan(0, text.index(" x"), [("a", {"t": "}]"})])
    prose = '[it\'s one, see] {"tool": "b"}'
    hit = _read(prose)
    assert hit is not None and hit.end == prose.index(" {")


def test_read_call_respects_its_window_and_start() -> None:
    text = 'xx research({"a": 1}) yy'
    assert read_call(text, 0, len(text)) is None  # no call starts exactly at 0
    hit = read_call(text, 3, len(text))
    assert hit is not None and hit.calls == [("research", '{"a": 1}')]
    cut = read_call(text, 3, 15)  # the window ends inside the object: truncated
    assert cut is not None and cut.end == 15


def test_as_arguments_repairs_or_keeps_the_raw_text() -> None:
    assert as_arguments('{"topic": "x",}') == {"topic": "x"}
    assert as_arguments('{"topic": "trunc') == {"topic": "trunc"}
    assert as_arguments({"a": 1}) == {"a": 1}
    assert as_arguments('"just a string"') == {UNPARSED: '"just a string"'}
    assert as_arguments(42) == {UNPARSED: "42"}


def test_loads_survives_hostile_input() -> None:
    assert loads("[" * 100_000) is None  # deep nesting: no RecursionError escapes
    assert loads("\x00\x1b{") == {}  # control codes before a truncated object
    assert loads('{"a": "b"} trailing prose') == {"a": "b"}


def test_make_call_gives_an_id_when_none_was_given() -> None:
    given = make_call("research", {"topic": "x"}, "call_7")
    assert given == {
        "name": "research",
        "args": {"topic": "x"},
        "id": "call_7",
        "type": "tool_call",
    }
    first, second = make_call("a", {}, None), make_call("a", {}, "")
    assert first["id"] and second["id"] and first["id"] != second["id"]
    assert str(first["id"]).startswith("call_")


class WebSearch(BaseModel):
    """Search the web."""

    query: str


def test_tool_name_is_the_name_bind_tools_sends() -> None:
    assert tool_name(WebSearch) == "WebSearch"
