"""The report as a file in the tool's result."""

from __future__ import annotations

import base64
import io

import pypdf
from mcp.types import BlobResourceContents, EmbeddedResource, TextContent, TextResourceContents

from deep_research.mcp.attachment import with_file
from deep_research.mcp.run import Answer
from tests.support.reports import FRAGMENT_URL, INFO, LIBRARY_URL, QUESTION, sample_report

VALUES = {"searches_used": 7, "citation_check": INFO["citation_check"]}


async def test_markdown_is_the_text_alone() -> None:
    assert await with_file(Answer("# R", "t-1"), "markdown", QUESTION) == "# R"


async def test_html_is_an_embedded_text_resource() -> None:
    result = await with_file(Answer(sample_report(), "t-1", VALUES), "html", QUESTION)
    assert isinstance(result, list)
    text, file = result
    assert isinstance(text, TextContent) and text.text == sample_report()
    assert isinstance(file, EmbeddedResource)
    resource = file.resource
    assert isinstance(resource, TextResourceContents)
    assert str(resource.uri) == "deep-research://reports/t-1.html"
    assert resource.mime_type == "text/html"
    assert f'href="{FRAGMENT_URL}"' in resource.text
    assert "thread t-1" in resource.text and "Searches: 7" in resource.text


async def test_pdf_is_a_base64_blob_with_the_links() -> None:
    result = await with_file(Answer(sample_report(), "t-2", VALUES), "pdf", QUESTION)
    assert isinstance(result, list)
    resource = result[1].resource  # type: ignore[union-attr]
    assert isinstance(resource, BlobResourceContents)
    assert resource.mime_type == "application/pdf"
    reader = pypdf.PdfReader(io.BytesIO(base64.b64decode(resource.blob)))
    uris = [a.get_object()["/A"]["/URI"] for page in reader.pages for a in page.get("/Annots", [])]
    assert FRAGMENT_URL in uris


async def test_only_the_library_documents_the_run_read_stay_file_links() -> None:
    values = {**VALUES, "sources": [{"url": LIBRARY_URL, "title": "t", "content": "c"}, "junk"]}
    report = f"[doc]({LIBRARY_URL}) [passwd](file:///etc/passwd)"
    result = await with_file(Answer(report, "t-3", values), "html", QUESTION)
    page = result[1].resource.text  # type: ignore[union-attr,index]
    assert f'href="{LIBRARY_URL}"' in page and 'href="file:///etc/passwd"' not in page
    bare = await with_file(Answer(report, "t-4", VALUES), "html", QUESTION)
    assert 'href="file:' not in bare[1].resource.text  # type: ignore[union-attr,index]
