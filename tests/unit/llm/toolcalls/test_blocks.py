"""toolcalls.blocks: the quoted spans of a reply, and which of them may hold calls."""

from __future__ import annotations

import pytest

from deep_research.llm.toolcalls.blocks import Block, blocks, indented_as_code


def _spans(text: str) -> list[tuple[str, str | None]]:
    """Each block's text, and its body's text when calls may be in it."""
    return [
        (text[b.start : b.end], text[b.body[0] : b.body[1]] if b.body else None)
        for b in blocks(text)
    ]


@pytest.mark.parametrize("info", ["", "json", "JSON", "tool_call", " json ", "{.json}"])
def test_a_call_fence_has_a_body(info: str) -> None:
    text = f'Calling:\n```{info}\n{{"tool": "research"}}\n```\nafter'
    [(block, body)] = _spans(text)
    assert block.startswith("```") and block.endswith("```")
    assert body == '{"tool": "research"}\n'


@pytest.mark.parametrize(
    "fence",
    [
        "```python\nresearch({})\n```",
        "~~~\nresearch({})\n~~~",
        "````\nresearch({})\n````",
        "    ```json\n    research({})\n    ```",  # inside an indented code block
        "<pre>research({})</pre>",
        "<CODE class='x'>research({})</code>",
        "<blockquote>research({})</blockquote>",
        "<samp>research({})</samp>",
        "<think>research({})</think>",
    ],
)
def test_every_other_code_form_is_quoted_without_a_body(fence: str) -> None:
    assert _spans(f"before\n{fence}\nafter") == [(fence, None)]


def test_an_unclosed_block_runs_to_the_end() -> None:
    text = 'x\n```json\n{"tool": "a"\n'
    [block] = blocks(text)
    assert block == Block(2, len(text), (10, len(text)))
    assert _spans("x <pre>never closed") == [("<pre>never closed", None)]


def test_a_fence_closes_only_on_as_many_of_its_own_character() -> None:
    text = "````\n```\ninner\n```\n````\ntail"
    [(block, body)] = _spans(text)
    assert block == "````\n```\ninner\n```\n````" and body is None
    mixed = "~~~\n```\nstill quoted\n~~~"
    assert _spans(mixed) == [(mixed, None)]


def test_blocks_come_in_order_and_never_nest() -> None:
    text = "a\n```\none\n```\nb <pre>```\ntwo\n```</pre> c\n```json\nthree\n```"
    found = list(blocks(text))
    assert len(found) == 3
    assert all(x.end <= y.start for x, y in zip(found, found[1:], strict=False))
    assert [body for _, body in _spans(text)] == ["one\n", None, "three\n"]


def test_tags_that_only_start_like_a_code_tag_are_not_blocks() -> None:
    assert list(blocks("<codex>x</codex> <preface>y</preface> <thinker>")) == []


def test_a_huge_unclosed_reply_is_read_in_one_pass() -> None:
    text = "```\n" + "line\n" * 200_000
    [block] = blocks(text)
    assert (block.start, block.end) == (0, len(text))


@pytest.mark.parametrize(
    ("indent", "code"),
    [("", False), ("   ", False), ("    ", True), ("\t", True), (" \t", True), ("  ", False)],
)
def test_indented_as_code_counts_tabs_as_four_columns(indent: str, code: bool) -> None:
    assert indented_as_code(indent) is code
