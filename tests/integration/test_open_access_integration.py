"""A paper's open-access PDF, end to end (real ChatOpenAI, OpenAlex provider and fetch over
127.0.0.1): the researcher reads the abstract and the PDF page that answers, and the report
cites the abstract at its DOI and the passage at its page of the PDF."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.documents import write_pdf
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.scholarly_servers import FakeJsonApi, openalex_work
from tests.support.paper_run import ReportingBrain, researched
from tests.support.search import PAGES_HOST

FACT = "Heat pump efficiency in cold climates fell by 12 percent at minus 20 degrees."
PAGES = ["Title page of the paper.", FACT, "References."]
ABSTRACT = "We measure heat pump efficiency in cold climates over three winters."
QUOTE = "fell by 12 percent"
DOI = "https://doi.org/10.1234/cold"


async def test_an_open_access_paper_is_cited_at_its_doi_and_its_pdf_page(
    monkeypatch: pytest.MonkeyPatch, pages: PageServer, tmp_path: Path
) -> None:
    pages.pdfs["paper.pdf"] = write_pdf(tmp_path / "paper.pdf", PAGES).read_bytes()
    pdf = f"http://{PAGES_HOST}:{pages.port}/pdf/paper.pdf"
    work = openalex_work("Heat pumps in cold climates", ABSTRACT, DOI, pdf_url=pdf)
    # The report cites the abstract at its DOI and the fact at its PDF page.
    brain = ReportingBrain(
        body=f"A three-winter study [measured it]({DOI}). "
        f'Efficiency drops [in the paper]({pdf}#page=2 "{QUOTE}").'
    )
    with (
        FakeJsonApi("/works", {"results": [work]}) as openalex,
        ScriptedOpenAIServer(brain) as llm,
    ):
        monkeypatch.setenv("OPENALEX_API_URL", openalex.api_url)
        out, seen = await researched(monkeypatch, llm, "openalex")

    assert pages.requests.count("/pdf/paper.pdf") == 1, "one fetch for the run's researchers"
    assert ABSTRACT in seen and FACT in seen and "page 2 of 3 of a PDF" in seen
    assert "Title page" not in seen and "References." not in seen  # pages not worth reading
    by_url = {s["url"]: s for s in out["sources"]}
    assert by_url[DOI]["content"] == ABSTRACT and "pdf_page" not in by_url[DOI]
    assert by_url[f"{pdf}#page=2"]["content"] == FACT and by_url[f"{pdf}#page=2"]["pdf_page"] == 2
    assert not [url for url in by_url if url.startswith(pdf) and url != f"{pdf}#page=2"]

    report, check = out["final_report"], out["citation_check"]
    body = report.split("## Sources")[0]
    assert f"[in the paper]({pdf}#page=2)" in body, "kept at its page, no text fragment"
    assert f"[measured it]({DOI}" in body and f"{pdf}#page=3" not in report
    assert check["fabricated_removed"] == 0
