"""search/cleaning.py: junk refused, entity soup and markup cleaned, hostile sizes bounded."""

from __future__ import annotations

import pytest

from deep_research.search.cleaning import MAX_QUERY_CHARS, clean


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "   \n\t ",
        "query",
        "query1",
        "Query 2",
        "your query here",
        "<query>",
        "{query}",
        "[search term]",
        "search terms",
        "keywords",
        "...",
        "&lt;query&gt;",
        "&amp;lt;query&amp;gt;",
        "&#34;&#34;",
        "<b></b>",
        "<br/>",
        "&nbsp;",
        "??!",
        "n/a",
        "\u200b",
        "&#8203;\x00",
        '["query1", "query2"]',
        "query-1",
    ],
)
def test_junk_is_refused_with_one_line_saying_why(junk: str) -> None:
    cleaned = clean(junk)
    assert cleaned.refused.startswith("Not searched: ")
    assert "\n" not in cleaned.refused and "No search was used" in cleaned.refused
    assert 'for example "' in cleaned.refused, "the model is shown a query that works"


@pytest.mark.parametrize(
    ("asked", "sent"),
    [
        ("heat pumps cold climate", "heat pumps cold climate"),
        ("  heat\n pumps  ", "heat pumps"),
        ("&lt;b&gt;heat pumps&lt;/b&gt; efficiency", "heat pumps efficiency"),
        ("&#34;heat pumps&#34; COP", '"heat pumps" COP'),
        ("&amp;quot;R&amp;amp;D&amp;quot; spending", '"R&D" spending'),
        ("<p>battery <i>recycling</i></p>", "battery recycling"),
        ("query languages for graph databases", "query languages for graph databases"),
        ("2025", "2025"),
        ("heat\u200b pumps\x1b[31m", "heat pumps[31m"),
        ("a < b and c > d", "a < b and c > d"),
    ],
)
def test_what_is_sent_is_the_cleaned_text(asked: str, sent: str) -> None:
    cleaned = clean(asked)
    assert not cleaned.refused and cleaned.query == sent


def test_a_huge_query_is_read_in_part_and_cut_at_a_word() -> None:
    cleaned = clean("heat pump " * 1_000_000)
    assert not cleaned.refused
    assert len(cleaned.query) <= MAX_QUERY_CHARS and cleaned.query.endswith("pump")


def test_a_refused_query_is_shown_short() -> None:
    cleaned = clean("." * 10_000)
    assert cleaned.refused and len(cleaned.query) <= 80
