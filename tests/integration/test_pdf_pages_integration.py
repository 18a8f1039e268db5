"""A PDF found on the web, end to end (real ChatOpenAI, Tavily client and fetch over
127.0.0.1): the researcher reads the page that answers, the report cites that page, and
links to the file or to a page nobody read are led to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.documents import write_pdf
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.paper_run import ReportingBrain, researched
from tests.support.search import PAGES_HOST

FACT = "Heat pump efficiency in cold climates fell by 12 percent at minus 20 degrees."
PAGES = ["Annual review of the institute.", FACT, "Appendix with tables."]
QUOTE = "fell by 12 percent"


async def test_a_web_pdf_is_cited_at_the_page_its_passage_is_on(
    monkeypatch: pytest.MonkeyPatch, pages: PageServer, tmp_path: Path
) -> None:
    pages.pdfs["study.pdf"] = write_pdf(tmp_path / "study.pdf", PAGES).read_bytes()
    pdf = f"http://{PAGES_HOST}:{pages.port}/pdf/study.pdf"

    def corpus(query: str, max_results: int) -> list[dict[str, Any]]:
        return [
            {"url": pdf, "title": "[PDF] Cold climate study", "content": "A study.", "score": 0.9}
        ]

    # The report cites the PDF at the page read, at a page nobody read (quoting the page
    # read), and the file without a page.
    brain = ReportingBrain(
        body=f'Efficiency drops [at page two]({pdf}#page=2 "{QUOTE}"). '
        f'The same figure [at page three]({pdf}#page=3 "{QUOTE}"). '
        f"The whole study [as a file]({pdf})."
    )
    with FakeTavilyServer(corpus) as tavily, ScriptedOpenAIServer(brain) as llm:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        out, seen = await researched(monkeypatch, llm, "tavily")

    assert pages.requests.count("/pdf/study.pdf") == 1, "one fetch for the run's researchers"
    assert f"({pdf}#page=2)" in seen and "page 2 of 3 of a PDF" in seen and FACT in seen
    assert "Annual review" not in seen and "Appendix" not in seen  # pages not worth reading
    read = [s for s in out["sources"] if s["url"].startswith(pdf)]
    assert read and {s["url"] for s in read} == {f"{pdf}#page=2"}
    assert all(s["content"] == FACT and s.get("pdf_page") == 2 for s in read)

    report, check = out["final_report"], out["citation_check"]
    # Kept at its page; the page nobody read and the bare file are led to the page read;
    # no text fragment on a PDF link.
    assert f"[at page two]({pdf}#page=2)" in report
    assert f"[at page three]({pdf}#page=2)" in report
    assert f"[as a file]({pdf}#page=2)" in report
    assert f"{pdf}#page=3" not in report and ":~:" not in report.split("## Sources")[0]
    assert check["fabricated_removed"] == 0
