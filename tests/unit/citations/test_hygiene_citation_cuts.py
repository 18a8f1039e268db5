"""Removing a citation of a page never retrieved leaves a sentence a reader would write:
a label that names a source goes with its parentheses, a label in the sentence stays."""

from __future__ import annotations

import time

import pytest

from deep_research.citations import check_report
from deep_research.citations.markdown import parse
from deep_research.state import Source

PAGE = "https://example.org/cockles"
SOURCES = [
    Source(
        url=PAGE,
        title="Cockle surveys",
        content="Cockle beds in the inner estuary silted up after 2019.",
        found_by="cockles",
    )
]
GONE = "https://invented.example/elsmere"
GONE2 = "https://invented.example/survey"


@pytest.mark.parametrize(
    ("report", "published"),
    [
        # The case: a source title in parentheses of its own.
        (
            f"The beds silted up after 2019 ([Cockle beds of the inner Elsmere silt up]({GONE})).",
            "The beds silted up after 2019.",
        ),
        # Two sources in one aside, both never retrieved.
        (
            f"Landings fell by half ([Fisheries report 2021]({GONE}); [BBC News]({GONE2})).",
            "Landings fell by half.",
        ),
        # One of the two was retrieved: it stays in its parentheses, the other goes.
        (
            f"Landings fell by half ([Fisheries report]({GONE}), [Cockle surveys]({PAGE})).",
            f"Landings fell by half ([Cockle surveys]({PAGE})).",
        ),
        (
            f"Landings fell by half ([Cockle surveys]({PAGE}) and [BBC]({GONE})).",
            f"Landings fell by half ([Cockle surveys]({PAGE})).",
        ),
        # Numbered markers are pointers, not words.
        (f"Beds silted up [1]({GONE}) in 2019 [source 2]({GONE2}).", "Beds silted up in 2019."),
        # A label that is itself a parenthesis.
        (f"Beds silted up [(Elsmere Trust, 2020)]({GONE}).", "Beds silted up."),
        # Words of the sentence stay, in parentheses or not.
        (
            f"As [the Elsmere Trust reported]({GONE}), the beds silted up.",
            "As the Elsmere Trust reported, the beds silted up.",
        ),
        (
            f"The beds silted up (see [the 2020 survey]({GONE})).",
            "The beds silted up (see the 2020 survey).",
        ),
        (
            f"Beds silted up ([Elsmere]({GONE}) was worst hit).",
            "Beds silted up (Elsmere was worst hit).",
        ),
        # A parenthesis opening the paragraph takes the space after it instead.
        (f"([Elsmere Trust]({GONE})) Beds silted up.", "Beds silted up."),
        # A tilde in a removed label is not escaped into text that is gone.
        (f"Beds silted ~30 cm ([Silt ~ survey]({GONE})).", "Beds silted \\~30 cm."),
        # Code and escaped parentheses are not asides.
        (
            f"Run `([x](u))` and \\([Trust]({GONE})\\).",
            "Run `([x](u))` and \\(Trust\\).",
        ),
    ],
)
def test_a_removed_citation_leaves_a_sentence(report: str, published: str) -> None:
    checked = check_report(report, SOURCES)
    assert checked.body == published
    assert GONE not in checked.body and GONE2 not in checked.body


def test_a_list_item_and_a_table_cell_lose_the_aside_in_place() -> None:
    report = (
        f"- Beds silted up ([Elsmere Trust]({GONE})).\n"
        "\n| site | state |\n|---|---|\n"
        f"| Elsmere | silted ([Trust]({GONE})) |\n"
    )
    checked = check_report(report, SOURCES)
    assert checked.body == (
        "- Beds silted up.\n\n| site | state |\n|---|---|\n| Elsmere | silted |\n"
    )


def test_a_paragraph_of_only_an_aside_keeps_the_placeholder() -> None:
    checked = check_report(f"Intro.\n\n([Elsmere Trust]({GONE}))\n", SOURCES)
    assert checked.body == "Intro.\n\n(link removed: not a retrieved source)\n"
    assert checked.check["fabricated_removed"] == 1


def test_hostile_labels_nested_brackets_huge_labels_and_many_asides() -> None:
    from deep_research.citations import SourceRegistry
    from deep_research.citations.check import unverified

    huge = "Cockle beds " * 100_000  # 1.2 MB of label
    many = " ".join(f"Claim {i} ([Title {i} ~]({GONE}/{i}))." for i in range(5_000))
    reports = {
        "nested": f"Beds silted up ([a [b [c] (d)] e]({GONE})).",
        "unbalanced": f"Beds silted up ((([x]({GONE})) and ([y]({GONE2})",
        "huge": f"Beds silted up ([{huge}]({GONE})).",
        "many": many,
        "in label": f"Beds ([x ([y]({GONE2})) z]({GONE})).",
    }
    # This process's CPU time, not the wall clock: a busy machine slows the wall clock, not it.
    started = time.process_time()
    checked = {name: check_report(report, SOURCES) for name, report in reports.items()}
    assert time.process_time() - started < 20  # linear: a quadratic pass would take minutes
    registry = SourceRegistry(SOURCES)
    for name, result in checked.items():
        assert not unverified(result.body, registry), name
        assert GONE not in result.body and GONE2 not in result.body, name
    assert checked["nested"].body == "Beds silted up."
    assert checked["unbalanced"].body == "Beds silted up ((and (y"  # only whole asides go
    assert checked["huge"].body == "Beds silted up."
    assert checked["many"].body == " ".join(f"Claim {i}." for i in range(5_000))
    assert checked["many"].check["fabricated_removed"] == 5_000
    assert "Cockle" not in checked["huge"].body
    assert all(token.type != "link_open" for token in parse(checked["in label"].body))
