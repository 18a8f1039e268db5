"""toolcalls.reasoning: only the reasoning that opens a reply is removed."""

from __future__ import annotations

import pytest

from deep_research.llm.toolcalls.reasoning import strip_think


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("<think>plan it</think>\nThe answer.", "The answer."),
        ("  <THINK>a</THINK><think>b</think> Answer", "Answer"),
        ("<think>ran out of tokens and never clo", ""),
        ("the template opened it\n</think>\n\nAnswer", "Answer"),
        ("No reasoning at all.", "No reasoning at all."),
        ("", ""),
    ],
    ids=["one", "several", "unclosed", "template-opened", "none", "empty"],
)
def test_opening_reasoning_goes(reply: str, answer: str) -> None:
    assert strip_think(reply) == answer


@pytest.mark.parametrize(
    "reply",
    [
        "# Report\n\nModels wrap reasoning in tags, closed by\n</think>\nand more report.",
        "See [the docs](https://a.example) on\n</think>\nthe rest.",
        "Reasoning models end with a </think> tag inside a sentence; the report goes on.",
        "> quoted page\n</think>\nreply",
        "| a | b |\n</think>\nreply",
        "Intro.\n<think>a quoted block</think>\nmore",
    ],
    ids=["heading", "link", "mid-sentence", "blockquote", "table", "later-think"],
)
def test_an_answer_that_quotes_the_tag_is_left_whole(reply: str) -> None:
    assert strip_think(reply) == reply.strip()


def test_a_tag_after_the_opening_reasoning_is_kept() -> None:
    reply = "<think>x</think>The report mentions <think> and </think> tags."
    assert strip_think(reply) == "The report mentions <think> and </think> tags."


def test_a_hostile_run_of_open_tags_is_handled() -> None:
    reply = "<think>" * 50_000 + "</think>answer"
    assert strip_think(reply) == "answer"
    assert strip_think("</think>" * 50_000 + "tail") == "</think>" * 49_999 + "tail"
