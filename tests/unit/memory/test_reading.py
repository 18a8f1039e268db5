"""What memory embeds of a published report: its text as read."""

from __future__ import annotations

from deep_research.memory.chunks import report_chunks, split, token_count
from deep_research.memory.reading import reading_sections

FRAGMENT = "#:~:text=keep%20most%20of%20their%20output,minus%20fifteen%20degrees"
REPORT = f"""# Heat pumps in Norway

Air-source heat pumps [keep most of their output](https://example.org/cold{FRAGMENT}) at
minus fifteen degrees ([source](https://example.org/cold{FRAGMENT})); see also
https://example.net/bare-url and <https://example.com/autolink>.

| Region | Payback |
|---|---|
| Oslo | [8 years](https://example.org/costs#:~:text=eight%20years) |

```text
COP = heat out / electricity in
```

## Sources

1. [Heat pumps in cold climates](https://example.org/cold) (retrieved 2026-11-30)
2. [Heat pump costs](https://example.org/costs) (retrieved 2026-11-30)
"""


def reading_text(report: str) -> str:
    """The whole report as read: its sections, one after another."""
    return "\n\n".join(reading_sections(report))


def test_a_report_reads_without_link_targets_bare_urls_or_its_sources_list() -> None:
    text = reading_text(REPORT)
    assert "://" not in text and "www." not in text and "%20" not in text
    assert "Sources" not in text and "retrieved" not in text
    for kept in ("Heat pumps in Norway", "keep most of their output", "Oslo", "8 years", "COP"):
        assert kept in text
    assert "at minus fifteen degrees (source); see also and ." in " ".join(text.split())


def test_each_title_and_section_heading_starts_a_section_read_alike_wherever_it_stands() -> None:
    section = "## Costs\n\nA [payback](https://example.org/costs#:~:text=x) of eight years."
    report = f"# Title\n\nThe opening.\n\n{section}\n\n## Conclusion\n\nWorth it.\n"
    assert reading_sections(report) == [
        "Title\n\nThe opening.",
        "Costs\n\nA payback of eight years.",
        "Conclusion\n\nWorth it.",
    ]
    assert reading_sections("Prose before any heading.\n\n# Then one\n\nIts text.") == [
        "Prose before any heading.",
        "Then one\n\nIts text.",
    ]
    # Split on its own: the section's pieces, written alone, are the whole report's.
    long = section + " More about costs." * 300
    alone = report_chunks(long)
    assert len(alone) > 1 and set(alone) <= set(report_chunks(f"# T\n\nIntro.\n\n{long}"))


def test_a_bare_heading_or_a_deeper_one_is_never_a_piece_of_its_own() -> None:
    """A heading alone (`Running costs`) is near any question on its subject: as a piece it
    would make memory recall a report on another subject."""
    report = "# T\n\nOpen.\n\n## A\n\n### A1\n\n#### A2\n\nx\n\n## B\n\n## C\n\ny\n\n### D\n"
    assert reading_sections(report) == ["T\n\nOpen.", "A\n\nA1\n\nA2\n\nx", "B\n\nC\n\ny\n\nD"]
    assert reading_sections("# T\n\nOpen.\n\n## B") == ["T\n\nOpen.\n\nB"]
    # Only the report's own headings: one quoted, or in a list item, is its section's text.
    quoted = "## A\n\nx\n\n> ## Quoted\n\n- ## Listed\n"
    assert reading_sections(quoted) == ["A\n\nx\n\nQuoted\n\nListed"]


def test_a_numbered_heading_reads_as_the_published_report_shows_it() -> None:
    # The citation check drops section numbers: a part written as "## 2. Costs" is read as
    # the published "## Costs", so what was embedded early is found again.
    assert reading_sections("## 2. Costs\n\nText.") == reading_sections("## Costs\n\nText.")
    # Only a heading's number goes: prose keeps its "2. " (a list's marker is never text).
    assert reading_sections("## Costs\n\nIn 2. a sentence.") == ["Costs\n\nIn 2. a sentence."]


def test_headings_cannot_multiply_a_reports_pieces() -> None:
    many = "".join(f"## Part {n}\n\nWord {n}.\n\n" for n in range(3000))
    assert len(reading_sections(many)) == 3000
    assert len(report_chunks(many)) == len(split(reading_text(many))) < 100


def test_only_the_closing_sources_list_is_cut() -> None:
    # A heading of the same name inside the report (a section the writer called so) stays.
    report = "# Notes\n\nOn sourcing.\n\n## Sources\n\nSuppliers we called.\n\n" + REPORT
    assert "Suppliers we called" in reading_text(report)
    assert reading_text("Just prose, no links.") == "Just prose, no links."


def test_the_text_read_is_far_fewer_tokens_than_the_rendered_report() -> None:
    rendered = sum(token_count(c) for c in split(REPORT))
    read = sum(token_count(c) for c in split(reading_text(REPORT)))
    assert read < rendered / 2, (read, rendered)


def test_a_hostile_run_of_letters_reads_in_linear_time() -> None:
    # An unbounded scheme pattern tried every start of the run: 200 KB took minutes.
    letters = "a" * 200_000
    assert reading_text(f"{letters} https://example.org/x.") == f"{letters} ."


def test_a_sources_section_of_prose_is_kept_when_no_list_follows_it() -> None:
    # A report that cites nothing gets no Sources list, and a section the writer called
    # "Sources" over prose is content (citations.hygiene keeps it): none of it may go.
    report = (
        "# Heating\n\nIntro.\n\n## Sources\n\nHeat comes from ground, air and water.\n\n"
        "## Outlook\n\nCheaper each year.\n"
    )
    text = reading_text(report)
    assert "ground, air and water" in text and "Cheaper each year" in text


def test_a_report_in_another_language_loses_its_sources_list_too() -> None:
    german = REPORT.replace("## Sources", "## Quellen").replace("retrieved", "abgerufen")
    text = reading_text(german)
    assert "Quellen" not in text and "abgerufen" not in text and "Oslo" in text
