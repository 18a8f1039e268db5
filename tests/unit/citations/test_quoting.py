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


def test_markup_in_a_page_is_never_quoted() -> None:
    hostile = page(
        "http://127.0.0.1:9/hostile",
        "Heat pumps are **[great](javascript:alert(1))** in Norway. Heat pumps <img src=x "
        "onerror=y> in Norway. Heat pumps ![pixel](p.png) in Norway. See http://evil.example/x "
        "for heat pumps in Norway.\n\nHeat pumps in Norway run on cheap hydropower.",
    )
    evidence = quoted_evidence("heat pumps Norway", [hostile])
    assert "> Heat pumps in Norway run on cheap hydropower." in evidence
    for gone in ("javascript", "<img", "pixel", "evil.example"):
        assert gone not in evidence
    checked = check_report(evidence, [hostile])
    assert [source.url for source in checked.cited] == ["http://127.0.0.1:9/hostile"]
    assert checked.check["fabricated_removed"] == 0 and checked.check["fragments_kept"] == 1
    assert checked.body.strip() == evidence.strip()


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


def test_a_quote_never_joins_sentences_the_page_keeps_apart() -> None:
    split = page(
        "http://127.0.0.1:9/split",
        "Heat pumps work well in Norway in winter. See http://x.example/a for installers. "
        "Heat pumps also cool homes in the Norwegian summer.",
    )
    evidence = quoted_evidence("heat pumps Norway", [split])
    assert "winter. Heat pumps also" not in evidence
    assert check_report(evidence, [split]).check["fragments_kept"] == 1


def test_markdown_and_hidden_characters_are_not_quoted() -> None:
    marked = page(
        "http://127.0.0.1:9/marked",
        "## Heat pumps in Norway\n\nHeat pumps are **very** common in Norway.\n\n"
        "| Year | Share |\n|---|---|\n\nHeat pumps \u202ereversed\u202c in Norway are here.\n\n"
        "Heat pumps heat most Norwegian homes in plain prose.",
    )
    evidence = quoted_evidence("heat pumps Norway", [marked])
    assert "> Heat pumps heat most Norwegian homes in plain prose." in evidence
    assert "\\#" not in evidence and "\\*" not in evidence and "\u202e" not in evidence


def test_a_web_pdf_is_linked_without_a_fragment() -> None:
    pdf = page("http://127.0.0.1:9/report.pdf", "Heat pumps in Norway are measured here at length.")
    evidence = quoted_evidence("heat pumps Norway", [pdf])
    assert "](http://127.0.0.1:9/report.pdf)" in evidence
    assert check_report(evidence, [pdf]).check["pdf_fragments_removed"] == 0
