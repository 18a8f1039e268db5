"""text.controls: terminal control codes out of outside text, tab and newline kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.text.controls import without_controls, without_surrogates, without_surrogates_in

CONTROLS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]]


@pytest.mark.parametrize("char", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_every_c0_and_c1_control_but_tab_and_newline_goes(char: str) -> None:
    assert without_controls(f"a{char}b") == "ab"


def test_terminal_escapes_lose_their_power() -> None:
    hyperlink = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"
    title = "\x1b]0;pwned\x07"
    csi = "\x9b2J\x9d0;t\x9c"  # one-byte CSI and OSC
    out = without_controls(hyperlink + title + csi + "\x1b[31mred\x1b[0m")
    assert not any(char in out for char in "\x1b\x07\x9b\x9d\x9c")
    assert "click" in out and "red" in out


def test_text_tab_newline_and_unicode_are_kept() -> None:
    text = "Héllo\tworld\nline 2 — ✓ 中文 \u200b emoji 🌍 \xa0nbsp"
    assert without_controls(text) == text


def test_any_object_is_made_text() -> None:
    assert without_controls(Path("/tmp/a\x1bb")) == "/tmp/ab"
    assert without_controls(42) == "42"
    assert without_controls(ValueError("bad\rline")) == "badline"


def test_a_huge_input_is_cleaned_whole() -> None:
    text = ("x\x1b" * 500_000) + "end"
    assert without_controls(text) == "x" * 500_000 + "end"


def test_a_lone_surrogate_is_replaced_and_a_pair_in_two_pieces_joined() -> None:
    """JSON's `"\\ud83d"` without its pair decodes to a lone surrogate, which no UTF-8
    writer takes; two streamed chunks of one emoji join into two halves of a pair."""
    assert without_surrogates("a\ud83d\ude00b\ud83dc\udc00") == "a\U0001f600b\ufffdc\ufffd"
    assert without_surrogates("plain \U0001f600") == "plain \U0001f600"
    data = {"k\ud83d": ["x\udc00", 1, None, ("y",)]}
    assert without_surrogates_in(data) == {"k\ufffd": ["x\ufffd", 1, None, ["y"]]}
