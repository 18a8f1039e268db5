"""Odd Markdown never stops a run: Unicode spaces, and the verified fallbacks."""

from __future__ import annotations

import pytest

from deep_research.citations import check_report
from deep_research.state import Source

PAGE = "https://real.example/page"
SOURCES = [Source(url=PAGE, title="Real", content="Heat pumps keep a COP of 2.", found_by="t")]


@pytest.mark.parametrize(
    "report",
    [
        "\u00a0\nnext [a](https://fake.example/x)",
        "1. \u00a0\n**bold** [a](https://fake.example/x)",
        "> \u3000\n> quoted [a](https://fake.example/x)",
        "\u2003\nSetext [a](https://fake.example/x)\n---",
    ],
)
def test_a_first_line_of_unicode_spaces_is_mapped_past(report: str) -> None:
    # CommonMark does not count such a line as blank, so it starts the block, and the
    # parser's trim drops it: the content is on the next line.
    checked = check_report(report, SOURCES)
    assert "fake.example" not in checked.body and "[a]" not in checked.body
    assert checked.check["fabricated_removed"] == 1
    assert checked.body.replace(" a", " [a](https://fake.example/x)", 1) == report
