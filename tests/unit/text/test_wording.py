"""text/wording.py: a long text as one short line (plural is tested in tests/unit/cli/)."""

from __future__ import annotations

import pytest

from deep_research.text.wording import first_line, one_line, plural


@pytest.mark.parametrize("limit", [1, 2, 10, 80])
def test_one_line_fits_the_limit_and_marks_a_cut(limit: int) -> None:
    text = "word  \n\t" * 1_000 + "\x0b\x0c\u2028end"
    line = one_line(text, limit)
    assert len(line) <= limit and "\n" not in line and "\t" not in line
    assert line.endswith("…")


def test_one_line_keeps_a_short_text_whole_with_its_spaces_collapsed() -> None:
    assert one_line("  a \n b\t\tc  ", 10) == "a b c"
    assert one_line("abc", 3) == "abc" and one_line("abcd", 3) == "ab…"
    assert one_line("ab   cdef", 4) == "ab…", "no space left before the mark"
    assert one_line("", 5) == "" and one_line(" \n ", 5) == ""


def test_first_line_is_the_first_with_text_cut_to_the_limit() -> None:
    assert first_line("\n  \n  Title line  \nsecond") == "Title line"
    assert first_line("", 5) == "" and first_line("\n\n", 5) == ""
    long = first_line("x" * 500 + "\nnext", 20)
    assert len(long) == 20 and long.endswith("…")
    assert first_line("a\r\nb") == "a" and first_line("\u2028b") == "b"


def test_irregular_plurals_and_thousands() -> None:
    assert plural(2, "query") == "2 queries" and plural(2, "fetch") == "2 fetches"
    assert plural(1, "query") == "1 query" and plural(-1, "source") == "-1 sources"
    assert plural(1_000_000, "search") == "1,000,000 searches"
