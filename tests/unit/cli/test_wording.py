"""The CLI's wording: counts pluralised."""

from __future__ import annotations


def test_counts_are_pluralised() -> None:
    from deep_research.text.wording import plural

    assert [plural(n, "source") for n in (0, 1, 2)] == ["0 sources", "1 source", "2 sources"]
    assert plural(1, "search") == "1 search" and plural(3, "search") == "3 searches"
    assert plural(1200, "token") == "1,200 tokens"
