"""The HTML page: what survives from the report, and what can never run or load."""

from __future__ import annotations

import re

from deep_research.export.html import CSP, allowed_href, render_body, report_html
from deep_research.export.report import ReportInfo
from tests.support.reports import INFO, LIBRARY_URL, QUESTION, SAMPLE_URLS, sample_report


def hrefs(page: str) -> list[str]:
    return re.findall(r'<a href="([^"]*)"', page)


def test_every_citation_keeps_its_link_with_fragment_and_page() -> None:
    page = report_html(sample_report(), ReportInfo(**INFO))
    found = [href.replace("&amp;", "&") for href in hrefs(page)]
    for url in SAMPLE_URLS:
        assert url in found
    assert f'href="{LIBRARY_URL}"' in page  # `file:` and `#page=3` as written


def test_structure_survives() -> None:
    body = render_body(sample_report())
    for tag in ("<h1>", "<h2>", "<h3>", "<ul>", "<ol>", "<table>", "<strong>", "<em>", "<s>"):
        assert tag in body, tag
    assert '<pre><code class="language-text">' in body
    assert "(retrieved 2026-11-30)" in body
    assert 'style="text-align:right"' in body  # the table's alignment row


def test_title_footer_and_policy_head_the_page() -> None:
    page = report_html(sample_report(), ReportInfo(**INFO))
    assert f"<title>{QUESTION}</title>" in page
    assert page.count("<h1>") == 1  # the report's own heading, no second title
    assert f'content="{CSP}"' in page
    assert page.index("Content-Security-Policy") < page.index("<style>")
    footer = page.split("<footer>")[1]
    for fact in ("2026-12-01", "thread a1b2c3d4", "local:qwen3-8b", "Searches: 12", "3 links"):
        assert fact in footer, fact


def test_a_report_without_a_heading_gets_the_question_as_one() -> None:
    page = report_html("Just text.", ReportInfo(question="Why <b>?"))
    assert "<h1>Why &lt;b&gt;?</h1>" in page
    assert "<h1>" not in report_html("Just text.", ReportInfo(), title_heading=False)


def test_raw_html_is_text_and_other_schemes_are_not_links() -> None:
    report = (
        '<script>alert(1)</script> <img src=x onerror="alert(2)"> <iframe src="https://x.example">'
        " [a](javascript:alert(3)) [b](data:text/html,hi) [c](vbscript:x) [d](//evil.example/)"
        " <javascript:alert(4)> ![e](https://img.example/e.png) [f](#sources)"
    )
    body = render_body(report)
    assert "<script" not in body and "<img" not in body and "<iframe" not in body
    assert "&lt;script&gt;" in body
    # The iframe tag is text; the bare URL in it is a link, as any bare URL in a report.
    assert hrefs(body) == ["https://x.example", "https://img.example/e.png", "#sources"]
    assert "[image: e]" in body  # an image is a link to it, never shown


def test_allowed_href() -> None:
    assert allowed_href("https://a.example/x#:~:text=b")
    assert allowed_href("file:///home/u/d.pdf#page=2")
    assert allowed_href("#sources")
    for url in ("javascript:alert(1)", "data:text/html,x", "file://host/x", "ftp://a/b", "x"):
        assert not allowed_href(url), url


def test_direction_overrides_are_removed_and_rtl_text_kept() -> None:
    body = render_body("[\u202egnp.exe](https://a.example/) مرحبا بالعالم a\u200bb")
    assert "\u202e" not in body
    assert "مرحبا بالعالم" in body and "a\u200bb" in body  # zero-width kept: scripts need it
