"""A scholarly result's open-access PDF, read for real: the real arXiv, OpenAlex and Europe
PMC providers against fakes of their APIs, the real page fetcher against the local page
server. The researcher gets the abstract at its own page and the PDF's best pages, each
at `pdf_url#page=N`; a PDF that cannot be read leaves the abstract alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.search.arxiv import ArxivProvider
from deep_research.search.europepmc import EuropePmcProvider
from deep_research.search.openalex import OpenAlexProvider
from tests.support.documents import write_pdf
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.scholarly_servers import (
    FakeArxivServer,
    FakeJsonApi,
    Paper,
    europepmc_record,
    openalex_work,
)
from tests.support.fetching import named
from tests.support.open_access import (
    ABSTRACT,
    FACT,
    PAGES,
    Fake,
    Made,
    answered,
)


def arxiv(pdf: str) -> Made:
    paper = Paper("2101.00001v2", "Attention for heat pumps", ABSTRACT, pdf_link=pdf)
    return FakeArxivServer([paper]), ArxivProvider, "https://arxiv.org/abs/2101.00001v2"


def openalex(pdf: str) -> Made:
    work = openalex_work("Attention for heat pumps", ABSTRACT, "10.1234/hp", pdf_url=pdf)
    return (
        FakeJsonApi("/works", {"results": [work]}),
        OpenAlexProvider,
        "https://doi.org/10.1234/hp",
    )


def europepmc(pdf: str) -> Made:
    record = europepmc_record("Attention for heat pumps", ABSTRACT, pmid="42", pdf_url=pdf)
    payload = {"hitCount": 1, "resultList": {"result": [record]}}
    api = FakeJsonApi("/rest/search", payload)
    return api, EuropePmcProvider, "https://pubmed.ncbi.nlm.nih.gov/42/"


@pytest.mark.parametrize("fake", [arxiv, openalex, europepmc])
async def test_the_researcher_reads_the_abstract_and_the_pdf_page_that_answers(
    fake: Fake, paper_pages: PageServer
) -> None:
    pdf = named(paper_pages, "/pdf/paper.pdf")
    abstract_page = fake(pdf)[2]
    answer = await answered(fake, pdf)
    by_url = {source["url"]: source for source in answer.sources}
    assert list(by_url) == [abstract_page, f"{pdf}#page=2"]
    assert by_url[abstract_page]["content"] == ABSTRACT and "pdf_page" not in by_url[abstract_page]
    assert by_url[f"{pdf}#page=2"]["content"] == FACT and by_url[f"{pdf}#page=2"]["pdf_page"] == 2
    assert ABSTRACT in answer.text and FACT in answer.text and "page 2 of 3 of a PDF" in answer.text
    assert "Title page" not in answer.text, "pages that share none of the query's words"
    # The PDF took the place of the result's page: once fetched, no landing page (DOI) read.
    assert paper_pages.requests == ["/pdf/paper.pdf"] and answer.trace["skipped_pages"] == []


async def test_a_paper_with_megabytes_of_figures_is_read_too(
    paper_pages: PageServer, tmp_path: Path
) -> None:
    """Most papers' PDFs are past a page's 2 MB cap: cut there, none of one was read and the
    researcher got the abstract alone."""
    big = write_pdf(tmp_path / "big.pdf", PAGES, figure=2_500_000).read_bytes()
    paper_pages.pdfs["paper.pdf"] = big
    pdf = named(paper_pages, "/pdf/paper.pdf")
    answer = await answered(arxiv, pdf)
    assert [source["url"] for source in answer.sources][1:] == [f"{pdf}#page=2"]
    assert FACT in answer.text and answer.trace["skipped_pages"] == []


@pytest.mark.parametrize("fetch_top_n", [0, 1, 2])
async def test_the_pdf_is_read_in_place_of_its_result_s_page(
    paper_pages: PageServer, fetch_top_n: int
) -> None:
    """A paper costs the query one of its pages to read, as a web result does: its PDF
    instead of its landing page (its DOI), not both when the PDF is read."""
    pdf = named(paper_pages, "/pdf/paper.pdf")
    works = [
        openalex_work("Attention for heat pumps", ABSTRACT, "10.1234/hp", pdf_url=pdf),
        openalex_work("Closed heat pump paper", "Heat pumps, closed access.", "10.1234/closed"),
    ]
    answer = await answered(
        lambda _: (FakeJsonApi("/works", {"results": works}), OpenAlexProvider, ""),
        pdf,
        fetch_top_n,
    )
    urls = [source["url"] for source in answer.sources]
    read = [skipped["url"] for skipped in answer.trace["skipped_pages"]]
    if fetch_top_n == 0:
        assert paper_pages.requests == [] and read == [], "no page to read: no PDF read either"
        assert urls == ["https://doi.org/10.1234/hp", "https://doi.org/10.1234/closed"]
    else:
        assert paper_pages.requests == ["/pdf/paper.pdf"]
        assert urls == [
            "https://doi.org/10.1234/hp",
            f"{pdf}#page=2",
            "https://doi.org/10.1234/closed",
        ]
        # The second page to read is the closed paper's DOI (offline here: not read).
        assert read == ([] if fetch_top_n == 1 else ["https://doi.org/10.1234/closed"])


async def test_two_results_naming_one_pdf_take_one_of_the_query_s_reads(
    paper_pages: PageServer,
) -> None:
    """A preprint and its published version share one PDF: it is read once, and the
    query's second read goes to the next result (a closed paper's DOI, offline here)."""
    pdf = named(paper_pages, "/pdf/paper.pdf")
    works = [
        openalex_work("Attention for heat pumps", ABSTRACT, "10.1234/hp", pdf_url=pdf),
        openalex_work("Attention for heat pumps (preprint)", ABSTRACT, "10.1234/pre", pdf_url=pdf),
        openalex_work("Closed heat pump paper", "Heat pumps, closed access.", "10.1234/closed"),
    ]
    answer = await answered(
        lambda _: (FakeJsonApi("/works", {"results": works}), OpenAlexProvider, ""), pdf, 2
    )
    assert paper_pages.requests == ["/pdf/paper.pdf"]
    read = [skipped["url"] for skipped in answer.trace["skipped_pages"]]
    assert read == ["https://doi.org/10.1234/closed"], "the second read is the next result's"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/pdf/missing.pdf", "HTTP 404"),
        ("/article/not-a-pdf", "not a PDF"),  # HTML where the PDF should be
        ("/report.pdf", "text extraction failed"),  # application/pdf, but not one
        ("/redirect-to?target=http://169.254.169.254/x.pdf", "a cloud metadata address"),
        ("http://169.254.169.254/latest/meta-data/a.pdf", "a cloud metadata address"),
        ("http://127.0.0.1:{port}/pdf/paper.pdf", "127.0.0.1, a loopback address"),
        ("javascript:alert(1)", ""),  # never a pdf_url: nothing fetched
        ("/pdf/" + "a" * 5_000 + ".pdf", ""),  # too long to be one
    ],
)
async def test_a_pdf_that_cannot_be_read_leaves_the_abstract_alone(
    paper_pages: PageServer, path: str, why: str
) -> None:
    pdf = named(paper_pages, path) if path.startswith("/") else path.format(port=paper_pages.port)
    answer = await answered(arxiv, pdf)
    assert [(s["url"], s["content"]) for s in answer.sources] == [
        ("https://arxiv.org/abs/2101.00001v2", ABSTRACT)
    ]
    assert ABSTRACT in answer.text and "of a PDF" not in answer.text
    skipped = answer.trace["skipped_pages"]
    assert [s["url"] for s in skipped] == ([pdf] if why else [])
    assert all(why in s["reason"] for s in skipped), skipped
    # Refused before any request, or requested once (a redirect hop to refuse not followed).
    assert paper_pages.requests == ([path] if why and path.startswith("/") else [])


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/pdf/missing.pdf", "HTTP 404"),
        ("/article/not-a-pdf", "not a PDF"),
        ("/report.pdf", "text extraction failed"),
    ],
)
async def test_a_paper_whose_pdf_cannot_be_read_is_read_at_its_own_page(
    paper_pages: PageServer, path: str, why: str
) -> None:
    """An OpenAlex work's open-access PDF fails: its landing page, which a web result would
    have been read at, is read in its place, after the PDF and once."""
    pdf, landing = named(paper_pages, path), named(paper_pages, "/article/attention-heat-pumps")
    work = openalex_work("Attention for heat pumps", ABSTRACT, None, pdf_url=pdf)
    work["primary_location"] = {"landing_page_url": landing}
    answer = await answered(
        lambda _: (FakeJsonApi("/works", {"results": [work]}), OpenAlexProvider, ""), pdf
    )
    assert [s["url"] for s in answer.sources] == [landing]
    assert "measured a 11 percent change in attention heat pumps" in answer.sources[0]["content"]
    assert "measured a 11 percent change" in answer.text and "of a PDF" not in answer.text
    assert paper_pages.requests == [path, "/article/attention-heat-pumps"]
    skipped = answer.trace["skipped_pages"]
    assert [s["url"] for s in skipped] == [pdf] and why in skipped[0]["reason"]
    assert answer.trace["pages_shown"] == [landing]


PAPER_ID = "2101.00001v2"
RENDERING = f"/html/{PAPER_ID}"


def arxiv_mirror(pages: PageServer) -> Made:
    """The paper with its PDF on a mirror at `/pdf/<id>`, as arXiv names its own: its HTML
    rendering is then `/html/<id>` there."""
    pdf = named(pages, f"/pdf/{PAPER_ID}")
    paper = Paper(PAPER_ID, "Attention for heat pumps", ABSTRACT, pdf_link=pdf)
    return FakeArxivServer([paper]), ArxivProvider, f"https://arxiv.org/abs/{PAPER_ID}"


@pytest.mark.parametrize(
    ("pdf", "why"),
    [(None, "HTTP 404"), (b"%PDF-1.7 not really", "text extraction failed")],
    ids=["missing", "unreadable"],
)
async def test_an_arxiv_paper_whose_pdf_cannot_be_read_is_read_as_its_html_rendering(
    paper_pages: PageServer, pdf: bytes | None, why: str
) -> None:
    """After its PDF, in a round of its own: the rendering is a source beside the abstract,
    cited where its text is; the PDF's failure is in the trace."""
    if pdf is not None:
        paper_pages.pdfs[PAPER_ID] = pdf
    url = named(paper_pages, f"/pdf/{PAPER_ID}")
    answer = await answered(lambda _: arxiv_mirror(paper_pages), url)
    rendering = named(paper_pages, RENDERING)
    assert [s["url"] for s in answer.sources] == [f"https://arxiv.org/abs/{PAPER_ID}", rendering]
    assert "measured a 11 percent change" in answer.sources[1]["content"]
    assert ABSTRACT not in answer.sources[1]["content"], "the abstract is cited at its page"
    assert "measured a 11 percent change" in answer.text and "of a PDF" not in answer.text
    assert paper_pages.requests == [f"/pdf/{PAPER_ID}", RENDERING]
    skipped = answer.trace["skipped_pages"]
    assert [s["url"] for s in skipped] == [url] and why in skipped[0]["reason"]
    assert answer.trace["pages_shown"] == [rendering]


async def test_an_arxiv_paper_whose_pdf_is_read_is_not_read_again_as_html(
    paper_pages: PageServer,
) -> None:
    paper_pages.pdfs[PAPER_ID] = paper_pages.pdfs["paper.pdf"]
    answer = await answered(lambda _: arxiv_mirror(paper_pages), "")
    pdf = named(paper_pages, f"/pdf/{PAPER_ID}")
    assert [s["url"] for s in answer.sources][1:] == [f"{pdf}#page=2"]
    assert paper_pages.requests == [f"/pdf/{PAPER_ID}"]


async def test_a_rendering_that_is_only_a_notice_leaves_the_abstract_alone(
    paper_pages: PageServer,
) -> None:
    """arXiv has no HTML for a paper whose LaTeX did not convert: a short page saying so
    is not the paper, and is not shown as its text."""
    paper_pages.renderings[PAPER_ID] = "<html><body><p>No HTML for this paper.</p></body></html>"
    answer = await answered(lambda _: arxiv_mirror(paper_pages), "")
    assert [(s["url"], s["content"]) for s in answer.sources] == [
        (f"https://arxiv.org/abs/{PAPER_ID}", ABSTRACT)
    ]
    assert "No HTML" not in answer.text
    assert paper_pages.requests == [f"/pdf/{PAPER_ID}", RENDERING]
    reasons = {s["url"]: s["reason"] for s in answer.trace["skipped_pages"]}
    assert reasons[named(paper_pages, RENDERING)] == "too little text to be the paper"


async def test_the_rendering_is_shown_without_the_abstract_it_repeats(
    paper_pages: PageServer,
) -> None:
    """arXiv's rendering opens with the abstract, which is a source at the abs page: the
    rendering's source is the paper after it, so no quote of the abstract is cited there."""
    body = "".join(
        f"<p>Section {n}: the controller measured a {10 + n} percent gain in heat pumps.</p>"
        for n in range(1, 30)
    )
    paper_pages.renderings[PAPER_ID] = (
        "<html><body><article><h1>Attention for heat pumps</h1>"
        f"<div><h6>Abstract</h6><p>{ABSTRACT}</p></div>"
        f"<section><h2>1 Introduction</h2>{body}</section></article></body></html>"
    )
    answer = await answered(lambda _: arxiv_mirror(paper_pages), "")
    abstract_page, rendering = answer.sources
    assert abstract_page["content"] == ABSTRACT
    assert rendering["url"] == named(paper_pages, RENDERING)
    assert ABSTRACT not in rendering["content"] and "Abstract" not in rendering["content"]
    assert "measured a 11 percent gain" in rendering["content"]


async def test_one_rendering_named_by_two_results_is_read_and_shown_once(
    paper_pages: PageServer,
) -> None:
    pdf = named(paper_pages, f"/pdf/{PAPER_ID}")
    twice = Paper(PAPER_ID, "Attention for heat pumps", ABSTRACT, pdf_link=pdf)
    made = FakeArxivServer([twice, twice]), ArxivProvider, ""
    answer = await answered(lambda _: made, "", fetch_top_n=2)
    urls = [s["url"] for s in answer.sources]
    assert urls.count(named(paper_pages, RENDERING)) == 1, urls
    assert paper_pages.requests.count(RENDERING) == 1
