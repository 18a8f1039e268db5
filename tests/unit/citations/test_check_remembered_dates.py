"""A page recalled from memory is listed with the date it was first retrieved; a page this
run read again is this run's, whichever of the two came first."""

from __future__ import annotations

from deep_research.citations import check_report
from deep_research.state import Source

URL = "https://example.org/heat-pumps"
TEXT = "Heat pumps keep most of their output at minus fifteen degrees."


def remembered(date: str) -> Source:
    source = Source(url=URL, title="Heat pumps", content=TEXT, found_by="a")
    source["retrieved"] = date
    return source


FRESH = Source(url=URL, title="Heat pumps", content=TEXT, found_by="b")
REPORT = f"They keep working [1]({URL}).\n"


def test_a_page_only_recalled_shows_its_first_retrieval_date() -> None:
    body = check_report(REPORT, [remembered("2026-11-01")]).render()
    assert f"1. [Heat pumps]({URL}) (retrieved 2026-11-01)" in body


def test_a_page_also_read_in_this_run_shows_no_old_date_in_either_order() -> None:
    for sources in ([remembered("2026-11-01"), FRESH], [FRESH, remembered("2026-11-01")]):
        checked = check_report(REPORT, sources)
        assert "(retrieved" not in checked.render(), sources
        assert [source.retrieved_on for source in checked.cited] == [""]
