"""search/pdf_pages.py: a web PDF read as the few pages that answer the query."""

from __future__ import annotations

from deep_research.search.fetch import Page
from deep_research.search.pdf_pages import MAX_PAGES_SHOWN, by_page, chosen_pages, with_open_access
from deep_research.search.query import Finding
from deep_research.search.types import SearchResult

PDF = "https://papers.example/report.pdf"


def test_the_pages_sharing_most_query_words_are_chosen_in_page_order() -> None:
    pages = ["Intro to tides.", "", "Wind output in Norway rose.", "Wind alone.", "Norway wind."]
    assert chosen_pages(pages, "wind output Norway", limit=2) == [3, 5]
    assert chosen_pages(pages, "unrelated", limit=2) == [1]  # none shares a word: the first
    assert chosen_pages(pages, "tides", limit=3) == [1]  # pages sharing none are left out
    assert chosen_pages(["", " "], "wind") == []
    assert len(chosen_pages(["wind"] * 50, "wind")) == MAX_PAGES_SHOWN
    assert chosen_pages(["Wheat.", "Heat."], "heat") == [2], "whole words, not parts"


def test_a_read_pdf_becomes_its_chosen_pages_each_a_finding_of_its_own() -> None:
    texts = ("Cover page.", "Wind output in Norway rose 40 percent.", "Appendix.")
    page = Page(PDF, text="\n\n".join(texts), note="only the first 9 bytes were read")
    found = Finding(
        SearchResult(PDF, "Report", "snippet of the file"), 0.8, replace_pages(page, texts)
    )
    html = Finding(
        SearchResult("https://a.example/p", "P", "s"), 0.5, Page("https://a.example/p", "x")
    )
    paged = by_page([found, html], "wind output")
    assert [f.result.url for f in paged] == [f"{PDF}#page=2", "https://a.example/p"]
    (two, same) = paged
    assert same is html
    assert two.result.title == "Report, page 2" and two.result.pdf_page == 2
    assert two.retrieved_text == "Wind output in Norway rose 40 percent."  # no file snippet
    assert two.page is not None and two.page.url == f"{PDF}#page=2" and not two.page.pdf_pages
    assert two.page.note == "page 2 of 3 of a PDF; only the first 9 bytes were read"
    assert two.relevance == 0.8


def test_a_skipped_or_unread_pdf_stays_one_finding() -> None:
    unread = Finding(SearchResult(PDF, "Report", "snippet"), 0.4)
    skipped = Finding(unread.result, 0.4, Page(PDF, skipped="timed out", pdf_pages=("a",)))
    assert by_page([unread, skipped], "a") == [unread, skipped]


def replace_pages(page: Page, texts: tuple[str, ...]) -> Page:
    return Page(page.url, page.text, page.skipped, page.note, page.raw_bytes, texts)


def test_a_paper_s_read_pdf_follows_its_abstract_as_a_finding_of_its_own() -> None:
    texts = ("Cover.", "Wind output rose.")
    abstract = SearchResult("https://doi.org/10.1/x", "Paper", "The abstract.", pdf_url=PDF)
    read = replace_pages(Page(PDF, text="\n\n".join(texts)), texts)
    other = Finding(SearchResult("https://b.example/", "B", "b", pdf_url=PDF + "?2"), 0.3)
    found = with_open_access(
        [Finding(abstract, 0.9), other],
        {PDF: read, PDF + "?2": Page(PDF + "?2", skipped="HTTP 404")},
    )
    assert [(f.result.url, f.result.content, f.page) for f in found] == [
        ("https://doi.org/10.1/x", "The abstract.", None),  # the abstract, at its own page
        (PDF, "", read),  # the file, none of the abstract's text: `by_page` picks its pages
        ("https://b.example/", "b", None),  # its PDF not read: the result alone
    ]
    assert found[1].relevance == 0.9 and not found[1].result.complete
    assert [f.result.url for f in by_page(found[:2], "wind")] == [abstract.url, f"{PDF}#page=2"]


def test_one_pdf_is_shown_once_however_many_results_name_it() -> None:
    """One paper from two sources (OpenAlex and Europe PMC), and a web result that is the
    PDF itself: its pages are shown once, not under three titles."""
    texts = ("Cover.", "Wind output rose.")
    read = replace_pages(Page(PDF, text="\n\n".join(texts)), texts)
    first = SearchResult("https://doi.org/10.1/x", "Paper", "The abstract.", pdf_url=PDF)
    second = SearchResult("https://europepmc.org/a/1", "Paper", "Abstract.", pdf_url=PDF)
    at_its_pdf = Finding(SearchResult(PDF, "Self", "s", pdf_url=PDF), 0.2, read)
    found = with_open_access([Finding(first, 0.9), Finding(second, 0.8)], {PDF: read})
    assert [f.result.url for f in found] == [first.url, PDF, second.url]
    found = with_open_access([Finding(first, 0.9), at_its_pdf], {PDF: read})
    assert [(f.result.url, f.result.content) for f in found] == [
        (first.url, "The abstract."),
        (PDF, "s"),
    ]


def test_common_words_choose_no_page_and_acronyms_are_words() -> None:
    """A page sharing only "the" with the query shares nothing; WHO is not "who"."""
    assert chosen_pages(["The cat sat.", "Dogs bark."], "the dogs") == [2]
    assert chosen_pages(["Cover.", "What are they? Pumps."], "what are they") == [1]
    pages = ["Cover page.", "WHO guidelines on malaria.", "Who pays for malaria nets?"]
    assert chosen_pages(pages, "WHO recommendations", limit=1) == [2]
