"""Odd Markdown never stops a run: Unicode spaces, and the verified fallbacks."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from deep_research.citations import CheckedReport, SourceRegistry, check, check_report
from deep_research.citations.markdown import UnmappedSourceError, parse
from deep_research.citations.verify import check_once
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


SPACES = ["\u00a0", "\t", " ", "\u3000", "\u202f", *map(chr, range(0x2000, 0x200B))]
PIECES = [
    f"[real]({PAGE})",
    "[fake](https://fake.example/x)",
    "https://fake.example/bare",
    PAGE,
    "<https://fake.example/auto>",
    "![img](https://fake.example/i.png)",
    "`code`",
    "~",
    "> ",
    "- ",
    "1. ",
    "## 2. Heading",
    "Sources\n---",
    "**bold**",
    "word",
    "more words",
    "| a | b |\n|---|---|\n| [c](https://fake.example/t) | d |",
    "\n",
    "\n\n",
    "    ",
    "[r][1]\n\n[1]: https://fake.example/ref",
    "<a href='https://fake.example/h'>",
    "</a>",
]


def links_and_images(markdown: str) -> list[str]:
    """Every URL a reader could click or a browser would load, as the check parses Markdown."""
    found = []
    for token in parse(markdown):
        for child in [token, *(token.children or [])]:
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
            elif child.type == "image":
                found.append(str(child.attrs["src"]))
            elif child.type.startswith("html") and re.search(r"<(a|img)\b", child.content):
                found.append(child.content)
    return found


def test_random_reports_with_unicode_spaces_never_raise_and_keep_only_retrieved_links() -> None:
    pick = random.Random(20240611)
    for _ in range(400):
        report = "".join(pick.choice(PIECES + SPACES * 2) for _ in range(pick.randint(1, 14)))
        rendered = check_report(report, SOURCES).render()
        assert set(links_and_images(rendered)) <= {PAGE}, report


def failing_on(marker: str) -> Callable[[str, SourceRegistry], CheckedReport]:
    """`check_once` as if it could not map any report containing `marker`."""

    def check(document: str, registry: SourceRegistry) -> CheckedReport:
        if marker in document:
            raise UnmappedSourceError(f"{marker!r} not found")
        return check_once(document, registry)

    return check


def test_a_report_the_check_cannot_map_is_retried_with_blank_looking_lines_emptied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(check, "check_once", failing_on("\u00a0\n"))
    checked = check_report(
        f"Intro\n\u00a0\nClaim [a]({PAGE}), [b](https://fake.example/x).", SOURCES
    )
    assert checked.body == f"Intro\n\nClaim [a]({PAGE}), b."
    assert checked.check["fabricated_removed"] == 1 and checked.cited[0].url == PAGE


def test_a_report_no_pass_can_map_is_made_inert_and_keeps_only_retrieved_urls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(check, "check_once", failing_on(""))
    report = (
        f"Claim [a]({PAGE}), [b](https://fake.example/x) ![i](https://fake.example/i.png)\n"
        f"<a href='https://fake.example/h'>h</a> https://fake.example/bare, see {PAGE}.\n\n"
        "[r]: https://fake.example/ref\n"
    )
    checked = check_report(report, SOURCES)
    assert links_and_images(checked.render()) == [PAGE] * 3  # two bare now, and Sources
    assert "fake.example" not in checked.body and "Claim" in checked.body
    assert checked.check["fabricated_removed"] == 5 and checked.check["links_kept"] == 2
    assert [source.url for source in checked.cited] == [PAGE]


def test_if_even_the_inert_form_cannot_be_parsed_the_text_goes_in_a_code_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken_parser(markdown: str) -> list[object]:
        raise RecursionError("parser bug")

    monkeypatch.setattr(check, "check_once", failing_on(""))
    monkeypatch.setattr(check, "parse", broken_parser)
    checked = check_report("Use ```x``` and [b](https://fake.example/x).", SOURCES)
    assert checked.body == "````text\nUse ```x``` and [b]().\n````\n"
    assert checked.check["removed_urls"] == ["https://fake.example/x"]


def test_a_link_an_edit_creates_is_checked_too() -> None:
    # Cutting the bare URL turns the line into a reference definition for `[x][1]`.
    checked = check_report("[x][1]\n\n[1]: https://fake.example/r    elsewhere", SOURCES)
    assert links_and_images(checked.render()) == []
    assert checked.body.startswith("x\n") and checked.check["fabricated_removed"] == 2


def test_leading_indentation_survives_rendering() -> None:
    # Stripped after the check, the code block would become a live autolink.
    report = "    <https://fake.example/y>\n\nText."
    assert check_report(report, SOURCES).render() == report + "\n"
