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
