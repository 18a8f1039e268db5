"""The PDF: link annotations for every citation, selectable text, nothing fetched."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pypdf
import pytest

from deep_research.export.html import report_html
from deep_research.export.pdf import pdf_bytes
from deep_research.export.report import ReportInfo
from tests.support.reports import INFO, SAMPLE_URLS, sample_report


def link_uris(pdf: bytes) -> list[str]:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    uris = []
    for page in reader.pages:
        for annotation in page.get("/Annots", []):
            action = annotation.get_object().get("/A", {})
            if action.get("/S") == "/URI":
                uris.append(str(action["/URI"]))
    return uris


def test_every_citation_is_a_link_annotation_and_the_text_is_selectable() -> None:
    pdf = pdf_bytes(report_html(sample_report(), ReportInfo(**INFO)))
    assert pdf.startswith(b"%PDF-")
    uris = link_uris(pdf)
    for url in SAMPLE_URLS:
        assert url in uris, url
    text = "".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)
    assert "Heat pumps in Norway" in text and "retrieved 2026-11-30" in text
    assert "thread a1b2c3d4" in text


def page_texts(pdf: bytes) -> list[str]:
    return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]


def test_a_one_paragraph_report_is_one_page() -> None:
    report = "# Heat pumps\n\nOne [cited page](https://example.org/) says they pay off.\n"
    [page] = page_texts(pdf_bytes(report_html(report, ReportInfo(**INFO))))
    assert "they pay off" in page and "Exported by deep_research" in page


def test_the_footer_never_sits_alone_on_a_page_nor_splits() -> None:
    """Reports growing a few lines at a time past the first page's end: at some length the
    report fills the page but for the footer. The footer then takes the report's last lines
    along to the next page; it never splits, never leaves a page to itself."""
    info = ReportInfo(**INFO)
    first, last = info.footer_lines()[0], info.footer_lines()[-1]
    paragraph = "Heat pumps save about half the electricity a panel heater uses. " * 4
    seen_two_pages = False
    for count in range(4, 14):  # a page and a half, four lines a step
        body = "\n\n".join(f"Paragraph {n}. {paragraph}" for n in range(count))
        pages = page_texts(pdf_bytes(report_html(f"# Heat pumps\n\n{body}\n", info)))
        seen_two_pages |= len(pages) > 1
        assert first in pages[-1] and last in pages[-1], (count, pages[-1])
        assert "panel heater" in pages[-1], (count, pages[-1])  # the report's last lines
    assert seen_two_pages, "the reports overflow the first page"


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()
    server.server_close()


def test_nothing_is_fetched_even_from_a_page_that_asks(
    counting_server: tuple[str, list[str]],
) -> None:
    base, seen = counting_server
    # Not a page the export writes: one that names resources, to show the fetcher refuses.
    page = (
        f'<html><head><style>@import url("{base}/a.css"); body {{ background: '
        f'url("{base}/b.png") }}</style><link rel="stylesheet" href="{base}/c.css"></head>'
        f'<body><img src="{base}/d.png"><p>text</p></body></html>'
    )
    assert pdf_bytes(page).startswith(b"%PDF-")
    assert seen == []
