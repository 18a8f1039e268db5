"""The title and the footer from what the run knew."""

from __future__ import annotations

from deep_research.export.report import ReportInfo, title_of
from tests.support.reports import INFO


def test_footer_says_what_is_known() -> None:
    lines = ReportInfo(**INFO).footer_lines()
    assert lines[0] == "Written 2026-12-01 · thread a1b2c3d4"
    assert lines[1] == "Models: orchestrator local:qwen3-8b, researcher local:qwen3-8b"
    assert lines[2] == "Searches: 12"
    assert lines[3] == (
        "Citation check: 3 links kept, 1 removed (never retrieved); 2 text fragments kept, "
        "0 dropped"
    )
    assert ReportInfo().footer_lines() == ["Exported by deep_research"]


def test_a_malformed_citation_check_is_left_out() -> None:
    info = ReportInfo(citation_check={"links_kept": "many"})
    assert ReportInfo.footer_lines(info) == ["Exported by deep_research"]


def test_title_is_the_question_else_the_heading() -> None:
    assert title_of("# Heat\n\ntext", ReportInfo(question="Q?")) == ("Q?", True)
    assert title_of("\n# Heat *pumps*\n", ReportInfo()) == ("Heat pumps", True)
    assert title_of("## Not a title\n", ReportInfo()) == ("Research report", False)
    assert title_of("text", ReportInfo(question="x\n" * 400))[0].endswith("…")
