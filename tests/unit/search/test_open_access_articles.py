"""An open-access article's full text, read for real: Europe PMC's JATS XML for its own
records and for OpenAlex works with a copy in PMC, through the real providers against
fakes of the APIs and the real page fetcher. The sections that answer the researcher's
topic are cited at the article's PMC page; what is read when the XML cannot be."""

from __future__ import annotations

import pytest

from deep_research.search import europepmc as europepmc_module
from deep_research.search.europepmc import EuropePmcProvider
from deep_research.search.openalex import OpenAlexProvider
from deep_research.search.types import SearchProvider
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.scholarly_servers import FakeJsonApi, europepmc_record, openalex_work
from tests.support.fetching import named
from tests.support.jats import article_xml
from tests.support.open_access import ABSTRACT, FACT, QUERY, Made, answered
from tests.support.search import PAGES_HOST

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

    return api, provider, f"{europepmc_module.PMC_ARTICLES}/PMC7745181/"


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
    paper_pages: PageServer, served: tuple[str, bytes] | None, why: str
) -> None:
    """Europe PMC's full text XML first: the sections that answer the query, cited at the
    article's PMC page; when it cannot be read as an article, the PDF in its place."""
    pdf = named(paper_pages, "/pdf/paper.pdf")
    page, bases = "https://pmc.ncbi.nlm.nih.gov/articles/PMC7745181/", []
    answer = await answered(lambda _: open_article(served, pdf, bases), pdf)
    by_url = {source["url"]: source["content"] for source in answer.sources}
    skipped = answer.trace["skipped_pages"]
    xml = f"{bases[0]}/PMC7745181/fullTextXML"
    if not why:
        opening = f"Background\n\n{ABSTRACT}"  # the abstract as the article has it
        assert by_url == {page: f"{opening}\n\nResults\n\n{RESULTS} [1]"}
        assert paper_pages.requests == [] and skipped == [], "the PDF is not read besides"
        assert RESULTS in answer.text and "Funding" not in answer.text
        assert "page text (section 2 of the article's 3 sections):" in answer.text
    else:
        assert by_url == {page: ABSTRACT, f"{pdf}#page=2": FACT}
        assert "Result 1, abstract:\n" in answer.text, "its page holds more than the abstract"
        assert paper_pages.requests == ["/pdf/paper.pdf"]
        assert [s["url"] for s in skipped] == [xml] and why in skipped[0]["reason"]


async def test_an_article_s_sections_are_on_the_topic_and_fit_the_turn(
    paper_pages: PageServer,
) -> None:
    """The sections are chosen by the researcher's topic ("heat pumps"), not by the query,
    so the page reads the same whatever the query; and they fit the excerpt a busy turn
    leaves each page, not just `max_page_chars`."""
    method = "Attention layers tuned the controller's efficiency."  # the query's words only
    results = RESULTS + " " + "Measured over three winters in twelve houses. " * 60
    article = article_xml(
        "Attention for heat pumps", ABSTRACT * 8, [("Methods", [method]), ("Results", [results])]
    )
    pdf, bases = named(paper_pages, "/pdf/paper.pdf"), []
    fake = open_article(("application/xml", article), named(paper_pages, "/pdf/paper.pdf"), bases)
    answer = await answered(lambda _: fake, pdf, max_chars=2_000)
    (content,) = [s["content"] for s in answer.sources]
    assert "Attention layers" not in content and RESULTS in content
    assert "section 2 of the article's 2 sections" in answer.text
    assert 1_200 < len(content) <= 2_000 - len(QUERY), "fitted to the turn's page excerpt"
    assert content in answer.text, "the page's text shown whole, as its source holds it"


@pytest.mark.parametrize(
    ("served", "page_there", "why"),
    [
        (("application/xml", ARTICLE), True, ""),
        (None, True, "HTTP 404"),
        (("application/xml", b"<rss><channel/></rss>"), True, "not a JATS article"),
        (None, False, "HTTP 404"),
    ],
)
async def test_an_openalex_work_s_pmc_copy_is_read_else_its_pmc_page(
    paper_pages: PageServer,
    monkeypatch: pytest.MonkeyPatch,
    served: tuple[str, bytes] | None,
    page_there: bool,
    why: str,
) -> None:
    """An open-access OpenAlex work with a copy in PMC: that copy's XML, cited at its PMC
    page; when the XML cannot be read (a free article outside PMC's open-access subset has
    none), the PMC page itself, before the PDF; when that fails too, the PDF."""
    articles = "/articles" if page_there else "/gone"
    monkeypatch.setattr(europepmc_module, "PMC_ARTICLES", named(paper_pages, articles))
    pdf, bases = named(paper_pages, "/pdf/paper.pdf"), []
    answer = await answered(lambda _: open_article(served, pdf, bases, "openalex"), pdf)
    page = named(paper_pages, f"{articles}/PMC7745181/")
    by_url = {source["url"]: source["content"] for source in answer.sources}
    skipped = [(s["url"], s["reason"]) for s in answer.trace["skipped_pages"]]
    if not why:
        assert list(by_url) == [page] and RESULTS in by_url[page] and FACT not in answer.text
        assert paper_pages.requests == [] and skipped == []
    elif page_there:
        assert list(by_url) == [page] and "measured a 11 percent change" in by_url[page]
        assert paper_pages.requests == ["/articles/PMC7745181/"], "its PDF after its page"
        assert [url for url, _ in skipped] == [f"{bases[0]}/PMC7745181/fullTextXML"]
        assert why in skipped[0][1]
    else:
        assert by_url == {page: ABSTRACT, f"{pdf}#page=2": FACT}, "the abstract and the PDF"
        assert paper_pages.requests == ["/gone/PMC7745181/", "/pdf/paper.pdf"]
        assert dict(skipped) == {page: "HTTP 404", f"{bases[0]}/PMC7745181/fullTextXML": why}
