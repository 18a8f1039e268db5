"""The HTML page: what survives from the report, and what can never run or load."""

from __future__ import annotations

import re

from deep_research.export.html import (
    CSP,
    TABLE_ROWS,
    allowed_href,
    render_body,
    report_html,
)
from deep_research.export.report import ReportInfo
from tests.support.reports import (
    INFO,
    LIBRARY_PATH,
    LIBRARY_URL,
    QUESTION,
    SAMPLE_URLS,
    sample_report,
)


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
    library = frozenset({"/home/u/d.pdf", "/home/u/a b.md"})
    assert allowed_href("https://a.example/x#:~:text=b")
    assert allowed_href("file:///home/u/d.pdf#page=2", library)
    assert allowed_href("file:///home/u/a%20b.md", library)
    assert allowed_href("#sources")
    for url in ("javascript:alert(1)", "data:text/html,x", "file://host/x", "ftp://a/b", "x"):
        assert not allowed_href(url, library), url
    assert not allowed_href("file:///home/u/d.pdf")  # no library given: no file is one
    for url in ("file:///etc/passwd", "file:///home/u/../../etc/passwd", "file:///home/u/d.pdf?x"):
        assert not allowed_href(url, library), url


def test_a_file_link_outside_the_library_is_plain_text() -> None:
    report = (
        f"[passwd](file:///etc/passwd) [ssh](<file:///home/ada/.ssh/id_rsa>) file:///etc/shadow"
        f" ![key](file:///etc/ssh/key) [doc]({LIBRARY_URL})"
    )
    body = render_body(report, frozenset({LIBRARY_PATH}))
    assert hrefs(body) == [LIBRARY_URL]
    assert "[passwd](file:///etc/passwd)" in body  # shown as written, not followed
    assert hrefs(render_body(report)) == []  # no library, no file link at all
    page = report_html(report, ReportInfo(library=frozenset({LIBRARY_PATH})))
    assert hrefs(page) == [LIBRARY_URL]


def test_a_long_table_is_cut_into_tables_that_repeat_the_header() -> None:
    rows = "\n".join(f"| r{n} | [c{n}](https://a.example/{n}) |" for n in range(2 * TABLE_ROWS + 5))
    body = render_body(f"Intro\n\n| key | link |\n|---|---:|\n{rows}\n\nAfter.")
    assert body.count("<table>") == body.count("</table>") == 3
    assert body.count("<th>key</th>") == 3 and body.count("</tbody>") == 3
    cells = re.findall(r"<td>r(\d+)</td>", body)
    assert cells == [str(n) for n in range(2 * TABLE_ROWS + 5)]  # every row, in order
    assert body.count('<td style="text-align:right"><a href=') == 2 * TABLE_ROWS + 5
    assert body.rstrip().endswith("<p>After.</p>")
    exact = "\n".join(f"| {n} |" for n in range(TABLE_ROWS))
    assert render_body(f"| h |\n|---|\n{exact}").count("<table>") == 1


def test_direction_overrides_are_removed_and_rtl_text_kept() -> None:
    body = render_body("[\u202egnp.exe](https://a.example/) مرحبا بالعالم a\u200bb")
    assert "\u202e" not in body
    assert "مرحبا بالعالم" in body and "a\u200bb" in body  # zero-width kept: scripts need it
