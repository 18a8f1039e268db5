"""The report's lengths: each setting's range of words, told to the writer, and the completion
limit its reply is sent with (room for the words, their links and a little thinking).

Light on purpose: `deep-research --help` lists the names.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

ReportLength = Literal["brief", "standard", "detailed"]
REPORT_LENGTHS: tuple[ReportLength, ...] = get_args(ReportLength)


# "Only LLM_MAX_TOKENS bounds it": the longest reply the operator allows.
UP_TO_LLM_MAX_TOKENS = 1 << 20


class Length(NamedTuple):
    words: tuple[int, int]  # the range the prompt asks for, in words
    # The completion limit of the orchestrator's replies (the report is one), never above
    # LLM_MAX_TOKENS; None: the role's usual one (`local:` 4,096, a budget LLM_MAX_TOKENS).
    tokens: int | None
    form: str  # what the prompt says of the layout


# A cited link with its text fragment costs 40-60 tokens, a word about 1.3 (a Chinese or
# Japanese character about 1): each limit holds its longest report with its links, and
# room for a thinking model's reasoning. `standard` keeps the limits runs had before.
LENGTHS: dict[ReportLength, Length] = {
    "brief": Length((150, 400), 2_048, "a short overview: a `#` title and a few paragraphs"),
    "standard": Length((600, 1_200), None, "a `#` title, an overview paragraph, `##` sections"),
    "detailed": Length(
        (1_500, 3_000),
        UP_TO_LLM_MAX_TOKENS,
        "a `#` title, an overview paragraph, several `##` sections with `###` subsections "
        "where they help, long paragraphs that explain, compare and conclude",
    ),
}


def length_range(length: ReportLength) -> str:
    """The range as the prompt and the docs say it: "600-1,200 words"."""
    low, high = LENGTHS[length].words
    return f"{low:,}-{high:,} words"
