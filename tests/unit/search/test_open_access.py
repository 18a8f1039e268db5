"""A scholarly result's open-access PDF, read for real: the real arXiv, OpenAlex and Europe
PMC providers against fakes of their APIs, the real page fetcher against the local page
server. The researcher gets the abstract at its own page and the PDF's best pages, each
at `pdf_url#page=N`; a PDF that cannot be read leaves the abstract alone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from deep_research.search.arxiv import ArxivProvider
from deep_research.search.budget import Grant
from deep_research.search.cache import RunCache
from deep_research.search.chain import SearchChain
from deep_research.search.europepmc import EuropePmcProvider
from deep_research.search.fetch import PageFetcher
from deep_research.search.openalex import OpenAlexProvider
from deep_research.search.query import Searcher
from deep_research.search.step import Answer, SearchSession
from deep_research.search.types import SearchProvider
from tests.support.documents import write_pdf
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.scholarly_servers import (
    FakeArxivServer,
    FakeJsonApi,
    Paper,
    europepmc_record,
    openalex_work,
)
from tests.support.fetching import Resolver, named
from tests.support.jats import article_xml
from tests.support.search import ALLOW_PAGES, PAGES_HOST

FACT = "Attention-based controllers raised heat pump efficiency by 12 percent at minus 20."
PAGES = ["Title page of the paper.", FACT, "References and appendix."]
ABSTRACT = "We study attention-based control of heat pumps in cold climates."
QUERY = "attention heat pump efficiency"
# A fake of a provider's API answering one paper whose open-access PDF is at the URL given,
# the provider for it, and the page the paper's abstract is cited at.
Made = tuple[FakeArxivServer | FakeJsonApi, Callable[[str], SearchProvider], str]
Fake = Callable[[str], Made]


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


@pytest.fixture
def server(bare_pages: PageServer, resolver: Resolver, tmp_path: Path) -> PageServer:
    """The page server as `pages.test`, serving the paper at /pdf/paper.pdf."""
    resolver({PAGES_HOST: ["127.0.0.1"]})
    bare_pages.pdfs["paper.pdf"] = write_pdf(tmp_path / "paper.pdf", PAGES).read_bytes()
    return bare_pages


@contextmanager
def searching(fake: Fake, pdf: str, fetch_top_n: int = 1) -> Iterator[SearchSession]:
    api, provider, _ = fake(pdf)
    with api:
        grant = Grant(5, share=5, counted_before=0, cap=5)
        searcher = Searcher(
            SearchChain([provider(api.api_url)]),
            RunCache(asyncio.get_running_loop()),
            grant,
            "owner",
            PageFetcher(ALLOW_PAGES, timeout=5.0, max_chars=5_000),
            max_results=5,
            threshold=0.0,
            fetch_top_n=fetch_top_n,
            scored=False,
        )
        yield SearchSession(searcher, "heat pumps", 5_000)


async def answered(fake: Fake, pdf: str, fetch_top_n: int = 1, max_chars: int = 20_000) -> Answer:
    with searching(fake, pdf, fetch_top_n) as session:
        async with session.searcher.fetcher:
            return await session.answer([QUERY], max_chars=max_chars)


@pytest.mark.parametrize("fake", [arxiv, openalex, europepmc])
async def test_the_researcher_reads_the_abstract_and_the_pdf_page_that_answers(
    fake: Fake, server: PageServer
) -> None:
    pdf = named(server, "/pdf/paper.pdf")
    abstract_page = fake(pdf)[2]
    answer = await answered(fake, pdf)
    by_url = {source["url"]: source for source in answer.sources}
    assert list(by_url) == [abstract_page, f"{pdf}#page=2"]
    assert by_url[abstract_page]["content"] == ABSTRACT and "pdf_page" not in by_url[abstract_page]
    assert by_url[f"{pdf}#page=2"]["content"] == FACT and by_url[f"{pdf}#page=2"]["pdf_page"] == 2
    assert ABSTRACT in answer.text and FACT in answer.text and "page 2 of 3 of a PDF" in answer.text
    assert "Title page" not in answer.text, "pages that share none of the query's words"
    # The PDF took the place of the result's page: once fetched, no landing page (DOI) read.
    assert server.requests == ["/pdf/paper.pdf"] and answer.trace["skipped_pages"] == []


@pytest.mark.parametrize("fetch_top_n", [0, 1, 2])
async def test_the_pdf_is_read_in_place_of_its_result_s_page(
    server: PageServer, fetch_top_n: int
) -> None:
    """A paper costs the query one of its pages to read, as a web result does: its PDF
    instead of its landing page (its DOI), not both when the PDF is read."""
    pdf = named(server, "/pdf/paper.pdf")
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
        assert server.requests == [] and read == [], "no page to read: no PDF read either"
        assert urls == ["https://doi.org/10.1234/hp", "https://doi.org/10.1234/closed"]
    else:
        assert server.requests == ["/pdf/paper.pdf"]
        assert urls == [
            "https://doi.org/10.1234/hp",
            f"{pdf}#page=2",
            "https://doi.org/10.1234/closed",
        ]
        # The second page to read is the closed paper's DOI (offline here: not read).
        assert read == ([] if fetch_top_n == 1 else ["https://doi.org/10.1234/closed"])


async def test_two_results_naming_one_pdf_take_one_of_the_query_s_reads(
    server: PageServer,
) -> None:
    """A preprint and its published version share one PDF: it is read once, and the
    query's second read goes to the next result (a closed paper's DOI, offline here)."""
    pdf = named(server, "/pdf/paper.pdf")
    works = [
        openalex_work("Attention for heat pumps", ABSTRACT, "10.1234/hp", pdf_url=pdf),
        openalex_work("Attention for heat pumps (preprint)", ABSTRACT, "10.1234/pre", pdf_url=pdf),
        openalex_work("Closed heat pump paper", "Heat pumps, closed access.", "10.1234/closed"),
    ]
    answer = await answered(
        lambda _: (FakeJsonApi("/works", {"results": works}), OpenAlexProvider, ""), pdf, 2
    )
    assert server.requests == ["/pdf/paper.pdf"]
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
    server: PageServer, path: str, why: str
) -> None:
    pdf = named(server, path) if path.startswith("/") else path.format(port=server.port)
    answer = await answered(arxiv, pdf)
    assert [(s["url"], s["content"]) for s in answer.sources] == [
        ("https://arxiv.org/abs/2101.00001v2", ABSTRACT)
    ]
    assert ABSTRACT in answer.text and "of a PDF" not in answer.text
    skipped = answer.trace["skipped_pages"]
    assert [s["url"] for s in skipped] == ([pdf] if why else [])
    assert all(why in s["reason"] for s in skipped), skipped
    # Refused before any request, or requested once (a redirect hop to refuse not followed).
    assert server.requests == ([path] if why and path.startswith("/") else [])


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/pdf/missing.pdf", "HTTP 404"),
        ("/article/not-a-pdf", "not a PDF"),
        ("/report.pdf", "text extraction failed"),
    ],
)
async def test_a_paper_whose_pdf_cannot_be_read_is_read_at_its_own_page(
    server: PageServer, path: str, why: str
) -> None:
    """An OpenAlex work's open-access PDF fails: its landing page, which a web result would
    have been read at, is read in its place, after the PDF and once."""
    pdf, landing = named(server, path), named(server, "/article/attention-heat-pumps")
    work = openalex_work("Attention for heat pumps", ABSTRACT, None, pdf_url=pdf)
    work["primary_location"] = {"landing_page_url": landing}
    answer = await answered(
        lambda _: (FakeJsonApi("/works", {"results": [work]}), OpenAlexProvider, ""), pdf
    )
    assert [s["url"] for s in answer.sources] == [landing]
    assert "measured a 11 percent change in attention heat pumps" in answer.sources[0]["content"]
    assert "measured a 11 percent change" in answer.text and "of a PDF" not in answer.text
    assert server.requests == [path, "/article/attention-heat-pumps"]
    skipped = answer.trace["skipped_pages"]
    assert [s["url"] for s in skipped] == [pdf] and why in skipped[0]["reason"]
    assert answer.trace["pages_shown"] == [landing]


RESULTS = "Attention controllers raised heat pump efficiency by 12 percent at minus 20."
ARTICLE = article_xml(
    "Attention for heat pumps",
    ABSTRACT,
    [
        ("Introduction", ["Buildings use a third of Europe's energy."]),
        ("Results", [RESULTS]),
        ("Funding", ["The authors thank the council."]),
    ],
)


def open_article(
    served: tuple[str, bytes] | None, pdf: str, bases: list[str], kind: str = "europepmc"
) -> Made:
    """Europe PMC (or OpenAlex, as `kind`) answering one open-access article with a PMC copy
    (its free PDF at `pdf`), Europe PMC serving its full text as `served`; the full texts'
    base URL is put in `bases` once it is known."""
    if kind == "europepmc":
        record = europepmc_record("Attention for heat pumps", ABSTRACT, pmid="42", pdf_url=pdf)
        record |= {"pmcid": "PMC7745181", "isOpenAccess": "Y"}
        path, payload = "/rest/search", {"hitCount": 1, "resultList": {"result": [record]}}
    else:  # OpenAlex names the copy without "PMC", as it does for some works
        work = openalex_work("Attention for heat pumps", ABSTRACT, "10.1234/hp", pdf_url=pdf)
        work["ids"] = {"pmcid": "https://www.ncbi.nlm.nih.gov/pmc/articles/7745181"}
        path, payload = "/works", {"results": [work]}
    files = {"/rest/PMC7745181/fullTextXML": served} if served else {}
    api = FakeJsonApi(path, payload, files=files)

    def provider(url: str) -> SearchProvider:  # its host named as the fetcher may read it
        bases.append(f"http://{PAGES_HOST}:{api.port}/rest")
        if kind == "europepmc":
            return EuropePmcProvider(url, full_texts=bases[0])
        return OpenAlexProvider(url, full_texts=bases[0])

    return api, provider, "https://pmc.ncbi.nlm.nih.gov/articles/PMC7745181/"


@pytest.mark.parametrize("kind", ["europepmc", "openalex"])
@pytest.mark.parametrize(
    ("served", "why"),
    [
        (("application/xml", ARTICLE), ""),
        (("text/xml; charset=utf-8", ARTICLE), ""),
        (("application/xml", b"<rss><channel/></rss>"), "not a JATS article"),
        (("text/html", b"<html><p>A page.</p></html>"), "not an article"),
        (None, "HTTP 404"),
    ],
)
async def test_an_open_access_article_is_read_as_its_sections_else_as_its_pdf(
    server: PageServer, served: tuple[str, bytes] | None, why: str, kind: str
) -> None:
    """Europe PMC's full text XML first: the sections that answer the query, cited at the
    article's PMC page; when it cannot be read as an article, the PDF in its place."""
    pdf = named(server, "/pdf/paper.pdf")
    page, bases = "https://pmc.ncbi.nlm.nih.gov/articles/PMC7745181/", []
    answer = await answered(lambda _: open_article(served, pdf, bases, kind), pdf)
    by_url = {source["url"]: source["content"] for source in answer.sources}
    skipped = answer.trace["skipped_pages"]
    xml = f"{bases[0]}/PMC7745181/fullTextXML"
    if not why:
        opening = f"Background\n\n{ABSTRACT}"  # the abstract as the article has it
        assert by_url == {page: f"{opening}\n\nResults\n\n{RESULTS} [1]"}
        assert server.requests == [] and skipped == [], "the PDF is not read besides"
        assert RESULTS in answer.text and "Funding" not in answer.text
        assert "page text (section 2 of the article's 3 sections):" in answer.text
    else:
        assert by_url == {page: ABSTRACT, f"{pdf}#page=2": FACT}
        assert "Result 1, abstract:\n" in answer.text, "its page holds more than the abstract"
        assert server.requests == ["/pdf/paper.pdf"]
        assert [s["url"] for s in skipped] == [xml] and why in skipped[0]["reason"]


async def test_an_article_s_sections_are_on_the_topic_and_fit_the_turn(server: PageServer) -> None:
    """The sections are chosen by the researcher's topic ("heat pumps"), not by the query,
    so the page reads the same whatever the query; and they fit the excerpt a busy turn
    leaves each page, not just `max_page_chars`."""
    method = "Attention layers tuned the controller's efficiency."  # the query's words only
    results = RESULTS + " " + "Measured over three winters in twelve houses. " * 60
    article = article_xml(
        "Attention for heat pumps", ABSTRACT * 8, [("Methods", [method]), ("Results", [results])]
    )
    pdf, bases = named(server, "/pdf/paper.pdf"), []
    fake = open_article(("application/xml", article), named(server, "/pdf/paper.pdf"), bases)
    answer = await answered(lambda _: fake, pdf, max_chars=2_000)
    (content,) = [s["content"] for s in answer.sources]
    assert "Attention layers" not in content and RESULTS in content
    assert "section 2 of the article's 2 sections" in answer.text
    assert 1_200 < len(content) <= 2_000 - len(QUERY), "fitted to the turn's page excerpt"
    assert content in answer.text, "the page's text shown whole, as its source holds it"
