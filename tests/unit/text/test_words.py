"""text/words.py: the words pages and quotes are matched by."""

from __future__ import annotations

from deep_research.text.words import matched_words


def test_common_words_are_left_out_and_acronyms_kept() -> None:
    assert matched_words("What are the WHO guidelines for ALL in children? The WHO says") == [
        "who",
        "guidelines",
        "all",
        "children",
        "says",
    ]
    assert matched_words("what are they, how can this be") == []
    assert matched_words("It is a CO2 cap") == ["co2", "cap"], "three letters or more"
