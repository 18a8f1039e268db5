"""search/full_text.py: what is read for a paper, in place of what failed, and which
sections of an article read as XML a researcher is shown."""

from __future__ import annotations

from dataclasses import replace

from deep_research.search.fetch import Page
from deep_research.search.full_text import (
    MAX_SECTIONS_SHOWN,
    _fitted,
    by_section,
    in_place_of_failed,
    read_as_meant,
    to_read,
    unread_reason,
    with_full_text,
)
from deep_research.search.query import Finding
from deep_research.search.types import SearchResult

PDF = "https://papers.example/report.pdf"
XML = "https://www.ebi.ac.uk/europepmc/webservices/rest/PMC1/fullTextXML"
ARTICLE = "https://pmc.ncbi.nlm.nih.gov/articles/PMC1/"


def replace_pages(page: Page, texts: tuple[str, ...]) -> Page:
    return replace(page, pdf_pages=texts)


def test_a_paper_is_read_at_its_full_text_then_its_pdf_then_its_own_page() -> None:
    both = SearchResult(ARTICLE, "P", "Abstract.", complete=True, pdf_url=PDF, full_text_url=XML)
    doi = SearchResult("https://doi.org/10.1/x", "P", "Abstract.", pdf_url=PDF)
    assert to_read(both) == [XML, PDF]
    assert to_read(doi) == [PDF, doi.url]
    pmc_copy = SearchResult(ARTICLE, "P", "Abstract.", pdf_url=PDF, full_text_url=XML)
    assert to_read(pmc_copy) == [XML, ARTICLE, PDF], "the article's page, then the PDF"
    assert to_read(SearchResult("https://web.example/", "W", "w")) == ["https://web.example/"]
    assert to_read(SearchResult("file:///a.txt", "W", "w")) == []
    article = Page(XML, text="t", sections=("opening", "body"))
    assert read_as_meant(XML, both, article)
    assert not read_as_meant(XML, both, Page(XML, text="<p>an HTML page</p>"))
    assert not read_as_meant(XML, both, Page(XML, text="t", sections=("the abstract alone",)))
    assert not read_as_meant(PDF, both, Page(PDF, text="t"))
    assert not read_as_meant(doi.url, doi, Page(doi.url, skipped="HTTP 403"))
    assert read_as_meant(doi.url, doi, Page(doi.url, text="The article."))


def test_an_arxiv_paper_is_read_at_its_pdf_then_its_html_rendering() -> None:
    html = "https://arxiv.org/html/2101.00001v2"
    paper = SearchResult("https://arxiv.org/abs/2101.00001v2", "P", "A.", complete=True)
    paper = replace(paper, pdf_url=PDF, html_url=html)
    assert to_read(paper) == [PDF, html], "its abstract page is not read: it is the abstract"
    assert read_as_meant(html, paper, Page(html, text="x" * 1_000))
    assert not read_as_meant(html, paper, Page(html, text="No HTML for this paper."))
    assert unread_reason(html, paper, Page(html, text="short")) == "too little text to be the paper"


def test_an_article_whose_xml_failed_has_its_pdf_read_instead() -> None:
    result = SearchResult(ARTICLE, "P", "Abstract.", complete=True, pdf_url=PDF, full_text_url=XML)
    finding = Finding(result, 1)
    failed = {XML: Page(XML, skipped="not a JATS article")}
    assert in_place_of_failed([finding], failed, {XML}) == [PDF]
    read = {XML: Page(XML, text="t", sections=("a", "b"))}
    assert in_place_of_failed([finding], read, {XML}) == []
    no_body = {XML: Page(XML, text="t", sections=("the abstract alone",))}
    assert in_place_of_failed([finding], no_body, {XML}) == [PDF]
    alone = replace(result, pdf_url="")  # no PDF: nothing else (its page is the abstract's)
    assert in_place_of_failed([Finding(alone, 1)], failed, {XML}) == []
    # Past its query's pages to read: another query's failed read of it counts for nothing.
    assert in_place_of_failed([finding], failed, set()) == []
    reasons = [unread_reason(XML, result, page[XML]) for page in (failed, no_body)]
    assert reasons == ["not a JATS article", "an article without a body"]
    assert unread_reason(XML, result, Page(XML, text="<html>")) == "not an article"
    assert unread_reason(PDF, result, Page(PDF, text="<html>")) == "not a PDF"


def test_each_read_in_place_of_a_failed_one_walks_on_to_the_next() -> None:
    """A PMC copy: its XML, its page, its PDF, one round each, and none once one is read."""
    result = SearchResult(ARTICLE, "P", "Abstract.", pdf_url=PDF, full_text_url=XML)
    finding = [Finding(result, 1)]
    refused = {url: Page(url, skipped="HTTP 403") for url in (XML, ARTICLE, PDF)}
    assert in_place_of_failed(finding, {}, {XML}) == [], "its first not read yet"
    assert in_place_of_failed(finding, {XML: refused[XML]}, {XML}) == [ARTICLE]
    two_failed = {XML: refused[XML], ARTICLE: refused[ARTICLE]}
    assert in_place_of_failed(finding, two_failed, {XML}) == [PDF]
    assert in_place_of_failed(finding, refused, {XML}) == [], "nothing left"
    read_page = {XML: refused[XML], ARTICLE: Page(ARTICLE, text="The article.")}
    assert in_place_of_failed(finding, read_page, {XML}) == [], "its page was read"


def test_a_paper_whose_pdf_was_not_read_as_one_has_its_own_page_read_instead() -> None:
    """Only a fetched PDF that gave no pages counts, and only a result page still to read:
    a web page, not an abstract page (`complete`), not read already, asked for once."""
    texts = ("Cover.", "Wind output rose.")
    read = replace_pages(Page(PDF, text="\n\n".join(texts)), texts)
    failed = {f"{PDF}?{why}": Page(f"{PDF}?{why}", skipped=why) for why in ("HTTP 403", "a loop")}
    html = Page(f"{PDF}?html", text="<p>An article where the file should be.</p>")

    def paper(url: str, pdf: str, *, complete: bool = False) -> Finding:
        return Finding(SearchResult(url, "Paper", "Abstract.", complete=complete, pdf_url=pdf), 1)

    pages = {PDF: read, **failed, html.url: html, "https://doi.org/10.1/read": Page("x")}
    findings = [
        paper("https://doi.org/10.1/a", f"{PDF}?HTTP 403"),  # refused: its DOI instead
        paper("https://doi.org/10.1/b", html.url),  # not a PDF: its DOI instead
        paper("https://doi.org/10.1/a", f"{PDF}?a loop"),  # the same DOI: asked for once
        paper("https://doi.org/10.1/c", PDF),  # read as a PDF: nothing more
        paper("https://doi.org/10.1/d", f"{PDF}?unfetched"),  # past the pages to read
        paper("https://arxiv.org/abs/1", f"{PDF}?HTTP 403", complete=True),  # the abstract
        paper("file:///etc/passwd", f"{PDF}?HTTP 403"),  # no web page
        paper("https://doi.org/10.1/read", f"{PDF}?HTTP 403"),  # read already
        Finding(SearchResult("https://web.example/", "Web", "w"), 1),  # no PDF at all
    ]
    asked = {f.result.pdf_url for f in findings} - {f"{PDF}?unfetched"}
    # Two results naming one PDF (a preprint and its published version) asked for it once.
    twins = [paper("https://doi.org/10.1/pre", f"{PDF}?HTTP 403"), *findings[:1]]
    assert in_place_of_failed(twins, pages, {f"{PDF}?HTTP 403"}) == ["https://doi.org/10.1/pre"]
    assert in_place_of_failed(findings, pages, asked) == [
        "https://doi.org/10.1/a",
        "https://doi.org/10.1/b",
    ]
    assert in_place_of_failed(findings, {}, asked) == []


def article_finding(*body: str, opening: str = "Title\n\nAbstract.") -> Finding:
    result = SearchResult(ARTICLE, "P", "Abstract.", complete=True, full_text_url=XML)
    return Finding(result, 1, Page(XML, text="x", sections=(opening, *body)))


def test_an_article_shows_the_sections_on_its_topic_in_its_order() -> None:
    body = [f"Section {n} on soil." for n in range(6)]
    body[1] = "Wind output fell in frost."
    body[4] = "Frost and wind: the wind farms."
    (shown,) = by_section([article_finding(*body)], "wind frost output", 6_000)
    assert shown.page is not None and shown.page.sections == ()
    assert shown.page.text == (
        "Title\n\nAbstract.\n\nWind output fell in frost.\n\nFrost and wind: the wind farms."
    )
    assert shown.page.note == "sections 2 and 5 of the article's 6 sections"
    assert shown.retrieved_text == shown.page.text  # the abstract once, in the opening
    # No section shares a word: the first of the body, a sample of it.
    (shown,) = by_section([article_finding(*body)], "turbines", 6_000)
    assert shown.page is not None and shown.page.text == "Title\n\nAbstract.\n\nSection 0 on soil."
    assert shown.page.note == "section 1 of the article's 6 sections"
    # A front without an abstract: the API's opens the text, shown and held alike.
    (shown,) = by_section([article_finding(*body, opening="")], "wind", 6_000)
    assert shown.page is not None and shown.page.text.startswith("Abstract.\n\nWind output")
    assert shown.retrieved_text == shown.page.text


def test_an_article_whose_body_has_no_words_is_left_as_it_was() -> None:
    for blank in ("   ", ""):
        finding = article_finding(blank)
        assert by_section([finding], "wind", 6_000) == [finding]


def test_an_article_s_parts_share_the_excerpt_whole_when_short() -> None:
    long = "wind " + "word " * 2_000
    (shown,) = by_section([article_finding("wind, briefly.", long)], "wind", 3_000)
    assert shown.page is not None
    title, abstract, short, cut = shown.page.text.split("\n\n")
    assert (title, abstract, short) == ("Title", "Abstract.", "wind, briefly.")
    assert len(shown.page.text) <= 3_000 and len(cut) > 2_900, "the short ones' room passed on"
    many = [f"wind {n} " + "word " * 200 for n in range(9)]
    (shown,) = by_section([article_finding(*many, opening="A" * 5_000)], "wind", 1_200)
    assert shown.page is not None and len(shown.page.text) <= 1_200
    parts = shown.page.text.split("\n\n")
    assert len(parts) == 1 + MAX_SECTIONS_SHOWN and all(250 < len(p) < 310 for p in parts)


def test_only_an_article_read_as_one_becomes_the_result_s_page() -> None:
    result = SearchResult(ARTICLE, "P", "Abstract.", complete=True, full_text_url=XML)
    read = Page(XML, text="t", sections=("opening", "body"))
    (found,) = with_full_text([Finding(result, 1)], {XML: read})
    assert found.page == read
    for failed in (Page(XML, skipped="HTTP 404"), Page(XML, text="not an article")):
        (found,) = with_full_text([Finding(result, 1)], {XML: failed})
        assert found.page is None


def test_a_share_too_small_to_say_anything_drops_its_part() -> None:
    parts = ["a" * 50, "b" * 50, "c" * 50, "d" * 50]
    assert _fitted(parts, 6) == []
    fitted = _fitted(parts, 60)
    assert len("\n\n".join(fitted)) <= 60 and all(len(p) > 8 for p in fitted)
    assert _fitted(["", "short"], 100) == ["short"], "an empty part takes no room"
