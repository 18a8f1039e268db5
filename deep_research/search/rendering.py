"""A paper's HTML rendering (arXiv's `/html/ID`), read when its PDF cannot be.

It is read as a web page, from its start: a title, the abstract, then the paper. The
abstract is a source of its own at its abs page, so its paragraphs are left out of the
rendering's text; a page with little text is arXiv saying it has no rendering.
"""

from __future__ import annotations

from deep_research.search.fetch import Page
from deep_research.text.extract import CUT_MARK

# Less text than this (not cut at `max_page_chars`): a notice that there is no rendering.
PAPER_CHARS = 1_000
# A paragraph shorter than this is not taken for one of the abstract's (a heading, a name).
MIN_REPEAT = 40


def is_paper(page: Page) -> bool:
    """Whether a rendering's page holds a paper's text rather than a short notice, read as
    a web page (a PDF or an article's XML there would be cited as what it is not)."""
    if page.skipped or page.pdf_pages or page.sections:
        return False
    return len(page.text) >= PAPER_CHARS or page.text.endswith(CUT_MARK)


def why_not(page: Page) -> str:
    """Why a rendering's page that `is_paper` refused is not the paper (fixed words)."""
    return (
        "not a web page" if page.pdf_pages or page.sections else "too little text to be the paper"
    )


def without_abstract(text: str, abstract: str) -> str:
    """`text` without the paragraphs that repeat `abstract`, nor the heading over them."""
    said = _plain(abstract)
    kept = [part for part in text.split("\n\n") if not _repeats(_plain(part), said)]
    return "\n\n".join(kept)


def _repeats(paragraph: str, said: str) -> bool:
    if paragraph.strip("#* ").rstrip(".:").casefold() == "abstract":
        return True
    return len(paragraph) >= MIN_REPEAT and paragraph in said


def _plain(text: str) -> str:
    return " ".join(text.split())
