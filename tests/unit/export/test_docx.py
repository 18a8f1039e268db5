"""The Word file: headings, hyperlinks and the Sources list, and pandoc's bounds."""

from __future__ import annotations

import io

import docx
import pytest

from deep_research.export import docx as word
from deep_research.export.html import report_html
from deep_research.export.report import ReportInfo
from tests.support.reports import INFO, QUESTION, SAMPLE_URLS, sample_report


def test_headings_links_and_sources_reopen_in_python_docx() -> None:
    page = report_html(sample_report(), ReportInfo(**INFO), title_heading=False)
    document = docx.Document(io.BytesIO(word.docx_bytes(page)))
    styled = [(p.style.name, p.text) for p in document.paragraphs if p.style is not None]
    assert ("Title", QUESTION) in styled
    assert ("Heading 1", "Heat pumps in Norway") in styled
    assert ("Heading 2", "Sources") in styled
    assert ("Heading 3", "Measured in the field") in styled
    targets = {
        rel.target_ref for rel in document.part.rels.values() if rel.reltype.endswith("hyperlink")
    }
    assert set(SAMPLE_URLS) <= targets
    texts = [p.text for p in document.paragraphs]
    assert "Heating in Norwegian homes, 2024 (retrieved 2026-11-30)" in texts
    assert any("thread a1b2c3d4" in text for text in texts)
    assert len(document.tables) == 1 and document.tables[0].cell(1, 0).text == "Oslo"


def test_pandoc_past_its_time_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word, "PANDOC_SECONDS", 0.001)
    with pytest.raises(word.PandocError, match="pandoc took over 0.001 s"):
        word.docx_bytes("<p>x</p>" * 1000)


def test_pandoc_past_its_heap_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word, "PANDOC_HEAP", "2m")
    with pytest.raises(word.PandocError, match="pandoc could not write the Word file"):
        word.docx_bytes("<p>many words here</p>" * 20_000)
