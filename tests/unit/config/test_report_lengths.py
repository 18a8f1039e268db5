"""Each report length: a range of words that grows, and a completion limit that holds it."""

from __future__ import annotations

from deep_research.config.report_lengths import LENGTHS, REPORT_LENGTHS, length_range
from deep_research.config.settings import Context


def test_the_lengths_grow_and_each_limit_holds_its_longest_report_with_links() -> None:
    assert REPORT_LENGTHS == ("brief", "standard", "detailed")
    ranges = [LENGTHS[name].words for name in REPORT_LENGTHS]
    assert all(low < high for low, high in ranges)
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:], strict=False)), "no overlap"
    brief = LENGTHS["brief"]
    # 1.3 tokens a word, and a cited link (40-60 tokens) every 40 words.
    assert brief.tokens is not None and brief.tokens >= brief.words[1] * (1.3 + 60 / 40)


def test_the_range_reads_as_the_docs_and_the_prompt_say_it() -> None:
    assert length_range("standard") == "600-1,200 words"
    assert length_range("detailed") == "1,500-3,000 words"


def test_standard_is_the_default() -> None:
    assert Context().report_length == "standard"
