"""rendering: an arXiv paper's HTML rendering is a paper or a notice, and its text is
shown without the abstract it repeats (which is cited at its own page)."""

from __future__ import annotations

from deep_research.search.fetch import Page
from deep_research.search.rendering import PAPER_CHARS, is_paper, why_not, without_abstract
from deep_research.text.extract import clip

URL = "https://arxiv.org/html/2101.00001v2"
ABSTRACT = (
    "We study attention-based control of heat pumps in cold climates, and find that it "
    "saves energy in winter."
)


def test_a_short_page_is_a_notice_and_a_long_one_or_one_cut_short_is_a_paper() -> None:
    assert not is_paper(Page(URL, text="No HTML for this paper."))
    assert not is_paper(Page(URL, skipped="HTTP 404"))
    assert is_paper(Page(URL, text="word " * (PAPER_CHARS // 5)))
    # `max_page_chars` may be 500: a paper cut there is still a paper.
    assert is_paper(Page(URL, text=clip("word " * 2_000, 500)))


def test_the_abstract_and_its_heading_are_left_out_and_the_paper_kept() -> None:
    text = "\n\n".join(
        [
            "# Attention for heat pumps",
            "###### Abstract",
            ABSTRACT.replace(" in cold", "\nin cold"),  # wrapped otherwise: the same words
            "## 1 Introduction",
            "Heat pumps are widely used; the controller gained 12 percent.",
            "Attention",  # a short paragraph the abstract also holds: kept
        ]
    )
    kept = without_abstract(text, ABSTRACT)
    assert kept.split("\n\n") == [
        "# Attention for heat pumps",
        "## 1 Introduction",
        "Heat pumps are widely used; the controller gained 12 percent.",
        "Attention",
    ]
    assert without_abstract("**Abstract.**\n\nBody text.", ABSTRACT) == "Body text."


def test_a_paragraph_that_only_resembles_the_abstract_stays() -> None:
    changed = ABSTRACT.replace("saves energy", "costs energy")
    assert without_abstract(changed, ABSTRACT) == changed


def test_a_rendering_that_came_as_a_pdf_or_an_article_is_no_rendering() -> None:
    """A mirror answering `/html/ID` with a PDF (or JATS XML) gave no web page: it would be
    cited as pages of a PDF at the rendering's address."""
    long = "word " * PAPER_CHARS
    as_pdf = Page(URL, text=long, pdf_pages=(long,), pdf_total=1)
    as_article = Page(URL, text=long, sections=("abstract", "body"))
    assert not is_paper(as_pdf) and not is_paper(as_article)
    assert why_not(as_pdf) == why_not(as_article) == "not a web page"
    assert why_not(Page(URL, text="No HTML.")) == "too little text to be the paper"
