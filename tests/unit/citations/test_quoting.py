"""The floor's evidence: passages read, quoted word for word and linked to themselves."""

from __future__ import annotations

from deep_research.citations import check_report
from deep_research.citations.quoting import (
    EVIDENCE_NOTE,
    MAX_SENTENCES_SCANNED,
    PASSAGE_CHARS,
    quoted_evidence,
)
from deep_research.state import Source


def page(url: str, content: str, title: str = "A page") -> Source:
    return Source(url=url, title=title, content=content, found_by="q")


HEAT = page(
    "http://127.0.0.1:9/heat",
    "Menu. Home. Contact us today.\n\nHeat pumps in Norway save money. About 60% of "
    "Norwegian homes had a heat pump in 2023. Electricity was cheap.\n\nRoads and cars "
    "are a different topic that this page also covers at length.",
)
CARS = page("http://127.0.0.1:9/cars", "Cars in Oslo are mostly electric now, and roads are wide.")


def test_the_most_relevant_passage_is_quoted_and_its_link_checks_out() -> None:
    evidence = quoted_evidence("Are heat pumps worth it in Norway?", [CARS, HEAT])
    assert EVIDENCE_NOTE in evidence
    first = evidence.index("> Heat pumps in Norway save money.")
    assert first < evidence.index("Cars in Oslo"), "the page on the question comes first"
    checked = check_report(evidence, [CARS, HEAT])
    assert checked.status == "complete" and len(checked.cited) == 2
    assert checked.check["fragments_kept"] == 2 and checked.check["fragments_dropped"] == 0
    assert "Menu" not in evidence, "a passage opens on the point, not on the menu"


def test_nothing_to_quote_gives_nothing() -> None:
    assert quoted_evidence("heat pumps", []) == ""
    assert quoted_evidence("heat pumps", [page("http://127.0.0.1:9/x", "Too short.")]) == ""


def test_a_page_without_stops_is_cut_at_a_word_and_still_found() -> None:
    endless = page("http://127.0.0.1:9/endless", "heat pump data " * 2_000)
    evidence = quoted_evidence("heat pump", [endless])
    quoted = evidence.split("\n> ")[0]
    assert len(quoted) < PASSAGE_CHARS + 300
    assert check_report(evidence, [endless]).check["fragments_kept"] == 1


def test_markup_in_a_page_is_quoted_inert() -> None:
    hostile = page(
        "http://127.0.0.1:9/hostile",
        "Heat pumps are **[great](javascript:alert(1))** and <img src=x onerror=y> "
        "![pixel](p.png) efficient in Norway. See http://evil.example/x for heat pumps.",
    )
    evidence = quoted_evidence("heat pumps Norway", [hostile])
    checked = check_report(evidence, [hostile])
    assert [source.url for source in checked.cited] == ["http://127.0.0.1:9/hostile"]
    assert checked.check["fabricated_removed"] == 0 and checked.check["images_removed"] == 0
    assert checked.check["html_removed"] == 0 and checked.body.strip() == evidence.strip()
    assert "evil.example" not in evidence, "a sentence with an address is not quoted"


def test_at_most_the_count_asked_for_one_a_page() -> None:
    pages = [
        page(f"http://127.0.0.1:9/p{i}", f"Heat pumps fact number {i} is here, as measured.")
        for i in range(6)
    ]
    evidence = quoted_evidence("heat pumps", pages, count=2)
    assert evidence.count("\n> — ") == 2


def test_a_huge_page_is_scanned_within_bounds() -> None:
    sentences = "".join(f"Sentence {i} about nothing much at all. " for i in range(50_000))
    huge = page("http://127.0.0.1:9/huge", sentences + "Heat pumps in Norway are common.")
    # Only the first MAX_SENTENCES_SCANNED sentences are read: the late match is not found.
    evidence = quoted_evidence("heat pumps Norway", [huge])
    assert "Heat pumps in Norway" not in evidence
    assert MAX_SENTENCES_SCANNED < 50_000
