"""Markdown hygiene: tildes, numbered headings, the Sources section, hostile titles."""

from __future__ import annotations

import pytest

from deep_research.citations import check_report
from deep_research.citations.hygiene import escape_label
from deep_research.citations.markdown import parse
from deep_research.state import Source


def source(url: str, title: str = "Title", content: str = "Some text.") -> Source:
    return Source(url=url, title=title, content=content, found_by="topic")


A, B, C = "https://a.org/1", "https://b.org/2", "https://c.org/3"
SOURCES = [source(A, "Page A"), source(B, "Page B"), source(C, "Page C")]


def test_tildes_in_prose_are_escaped() -> None:
    checked = check_report("It costs ~5% less, ~10% in **~winter**.", [])
    assert checked.body == "It costs \\~5% less, \\~10% in **\\~winter**."
    assert checked.check["tildes_escaped"] == 3


def test_tildes_in_urls_code_and_escapes_are_kept() -> None:
    report = (
        f"[a]({A}#:~:text=Some) `x ~ y` \\~ https://a.org/~user\n\n"
        "```\nrm ~/tmp\n```\n\n    indented ~ code\n"
    )
    checked = check_report(report, [*SOURCES, source("https://a.org/~user", "User page")])
    assert checked.body == (
        f"[a]({A}#:~:text=Some) `x ~ y` \\~ [User page](https://a.org/~user)\n\n"
        "```\nrm ~/tmp\n```\n\n    indented ~ code\n"
    )
    assert checked.check["tildes_escaped"] == 0


def test_tildes_in_table_cells_and_headings_are_escaped() -> None:
    report = "## About ~3 kW\n\n| x | y |\n|---|---|\n| ~1 | `~2` |\n"
    checked = check_report(report, [])
    assert checked.body == "## About \\~3 kW\n\n| x | y |\n|---|---|\n| \\~1 | `~2` |\n"


def test_numbered_headings_lose_their_number() -> None:
    report = "# 1. Title\n\n## 2) Costs\n\n### 2.1. Details\n\nText 1. not a heading.\n"
    checked = check_report(report, [])
    assert checked.body == "# Title\n\n## Costs\n\n### Details\n\nText 1. not a heading.\n"
    assert checked.check["headings_fixed"] == 3


def test_headings_that_start_with_a_number_but_are_not_numbered_stay() -> None:
    report = "## 2024 in review\n\n## 3.5 million homes\n\n## 7.\n"
    assert check_report(report, []).body == report


def test_sources_section_lists_each_cited_source_once_in_order_of_first_citation() -> None:
    report = (
        f"First [b]({B}), then [a]({A}), [b again]({B}/), and [a]({A}#x).\n\n## After\n\nMore.\n\n"
        f"## References\n\n1. [c]({C})\n2. [fake](https://fake.example)\n\n[a]({A}) | [b]({B})\n"
    )
    checked = check_report(report, SOURCES)
    rendered = checked.render(appendix="## Research gaps\n\n- none")
    body, sources = rendered.split("## Sources\n\n")
    assert "## References" not in body and C not in body and "fake" not in body
    assert "## After\n\nMore." in body and body.index("## Research gaps") > body.index("After")
    assert sources == f"1. [Page B]({B})\n2. [Page A]({A})\n"
    assert checked.check["sources_listed"] == 2 and checked.check["fabricated_removed"] == 0


def test_a_sources_heading_over_prose_is_content() -> None:
    report = (
        "# Heat pumps\n\n## Sources\n\n"
        f"Air, ground and water are the three heat sources [a]({A}).\n\n## Costs\n\nCheap.\n"
    )
    checked = check_report(report, SOURCES)
    assert checked.body == report and checked.check["links_kept"] == 1


def test_a_closing_further_reading_with_prose_stays_and_is_checked() -> None:
    report = (
        f"## Analysis\n\nBody [a]({A}).\n\n## Further reading\n\n"
        f"The [A]({A}) overview is a good start; [also](https://fake.example/x) the IEA.\n"
    )
    checked = check_report(report, SOURCES)
    assert checked.body == report.replace("[also](https://fake.example/x)", "also")
    assert checked.check["fabricated_removed"] == 1


def test_a_references_list_followed_by_more_sections_stays() -> None:
    report = f"Text.\n\n### References\n\n- [x]({A})\n\n## Conclusion\n\nImportant.\n"
    assert check_report(report, SOURCES).body == report


def test_no_sources_section_when_nothing_is_cited() -> None:
    assert "## Sources" not in check_report("Plain text.", SOURCES).render()


def test_page_titles_cannot_inject_markdown_or_html() -> None:
    assert escape_label("<img src=x> [click](javascript:x) *~") == (
        "\\<img src=x\\> \\[click\\]\\(javascript:x\\) \\*\\~"
    )
    checked = check_report(f"[x]({A})", [source(A, "Evil ](https://evil.example) <b>")])
    listed = [t for t in parse(checked.render()) if t.type == "inline"][-1]
    children = listed.children or []
    assert [c.attrs["href"] for c in children if c.type == "link_open"] == [A]
    assert not [c for c in children if c.type == "html_inline"]


@pytest.mark.parametrize("title", ["Quellen", "Literatur", "来源", "参考文献", "Источники"])
def test_the_model_s_own_closing_list_goes_under_its_name_in_another_language(title: str) -> None:
    report = f"# Wärmepumpen\n\nText [a]({A}).\n\n## {title}\n\n- [A]({A})\n- [B]({B})\n"
    checked = check_report(report, SOURCES)
    assert title not in checked.body and checked.check["sources_listed"] == 1
    rendered = checked.render(language="de")
    assert rendered.endswith(f"## Quellen\n\n1. [Page A]({A})\n")
