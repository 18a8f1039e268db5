"""From downloaded bytes to the text a model reads: the main content, without hidden text."""

from __future__ import annotations

from itertools import islice
from typing import Any, NamedTuple

import trafilatura
from lxml.etree import XPath, strip_elements
from trafilatura.utils import load_html

from deep_research.errors import DeepResearchError
from deep_research.text import jats
from deep_research.text.pdf import PdfBounds, PdfRefused, read_pdf

# Text a browser would not show is where prompt injections hide: removed before extraction,
# so no extractor (trafilatura's or its fallbacks) can bring it back.
_UPPER, _LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"
_STYLE = f"translate(@style, '{_UPPER} \t\n\r', '{_LOWER}')"
HIDDEN = XPath(
    "//*[@hidden or @aria-hidden='true'"
    f" or contains({_STYLE}, 'display:none')"
    f" or contains({_STYLE}, 'visibility:hidden')]"
    " | //template"
)

# Extraction time grows faster than the page's element count (a paragraph of 10,000 links
# took 6 s of CPU, 60,000 over two minutes), and a thread cannot be stopped when the fetch
# times out: the tree is cut to this many nodes first, so extraction ends soon after any
# timeout. A long news page has 1,000-3,000; what is cut is a page's end, and only its
# first `max_page_chars` are kept anyway.
MAX_NODES = 5_000
# Main text shorter than this (characters) is extracted again, with the fallbacks.
THOROUGH_BELOW = 1_000
# Never text a reader sees, and often most of a modern page's nodes (inline SVG icons).
NOT_TEXT = ("script", "style", "noscript", "svg")
CUT_MARK = " …"  # what ends a text `clip` cut


def strip_hidden(tree: object) -> int:
    """Remove elements hidden by attribute or inline CSS from an lxml tree; returns how many."""
    removed = 0
    for node in HIDDEN(tree):
        if node.getparent() is not None:
            node.drop_tree()  # keeps the node's tail text, which is outside the hidden element
            removed += 1
    return removed


def cut_nodes(tree: Any, limit: int) -> bool:
    """Remove every node after the first `limit` in document order; whether any went.

    Deep nesting needs no rule of its own: lxml's parser stops nesting at 256 levels.
    """
    node = next(islice(tree.iter(), limit, None), None)
    if node is None:
        return False
    # `node` and everything after it go: its following siblings, it, then each
    # ancestor's following siblings (a removed node takes its tail text, which comes after).
    parent = node.getparent()
    for sibling in list(node.itersiblings()):
        parent.remove(sibling)
    parent.remove(node)
    while (grandparent := parent.getparent()) is not None:
        for sibling in list(parent.itersiblings()):
            grandparent.remove(sibling)
        parent = grandparent
    return True


def html_to_markdown(raw: bytes, url: str) -> str:
    """The page's main text as Markdown; navigation, ads, footers and hidden text left out."""
    tree = load_html(raw)
    if tree is None:
        return ""
    strip_elements(tree, *NOT_TEXT, with_tail=False)
    strip_hidden(tree)
    cut_nodes(tree, MAX_NODES)
    options: dict[str, Any] = {
        "url": url,
        "output_format": "markdown",
        "include_comments": False,
        "include_tables": True,
        "favor_precision": True,
    }
    # trafilatura's own extractor first: comparing it with readability's and jusText's
    # doubles the CPU of a news page (16 → 8 ms), and K researchers extract at once. The
    # comparison runs for a page where it found little, as on pages of bare <div>s, <span>s
    # or list items, where only the fallbacks find the text (`extract` copies the tree).
    text = trafilatura.extract(tree, fast=True, **options) or ""
    if len(text) < THOROUGH_BELOW:
        text = trafilatura.extract(tree, **options) or text
    return text.strip()


# A PDF found on the web: fewer pages and characters than a library document may have,
# since a researcher reads a few of its pages (the fetch's byte and time limits come first).
WEB_PDF = PdfBounds(pages=1_000, chars=300_000, content=20_000_000)


def web_pdf(raw: bytes) -> tuple[list[str], int, str]:
    """A web PDF's pages' text within `WEB_PDF` (item 0 is page 1), how many pages it has,
    and, when reading stopped at a bound, a note that says how much was read (fixed words
    and numbers). Raises `ExtractionFailed` whatever went wrong inside pypdf."""
    try:
        read = read_pdf(raw, WEB_PDF)
    except PdfRefused as error:  # fixed words
        raise ExtractionFailed(str(error)) from error
    except Exception as error:  # pypdf raises many types of its own on hostile bytes
        raise ExtractionFailed(f"text extraction failed ({type(error).__name__})") from error
    pages = [text for _, text in read.pages]
    note = ""
    if read.cut:
        note = (
            f"the PDF was read only in part: pages 1–{len(pages):,} of {read.total:,} ({read.cut})"
        )
    return pages, read.total, note


class ExtractionFailed(DeepResearchError):
    """A parser failed on a page; the message is fixed text naming the error's type."""


class Read(NamedTuple):
    """What a downloaded body gave: its text, and its parts when it has them."""

    text: str
    note: str = ""  # how much of a PDF was read, when not all
    pdf_pages: tuple[str, ...] = ()
    pdf_total: int = 0
    sections: tuple[str, ...] = ()


def read_body(kind: str, raw: bytes, charset: str | None, url: str) -> Read:
    """A downloaded body of `kind` ('html', 'text', 'pdf' or 'jats') as text, with a PDF's
    pages or an article's sections. Raises `ExtractionFailed`."""
    if kind == "pdf":
        pages, total, note = web_pdf(raw)
        return Read("\n\n".join(pages).strip(), note, tuple(pages), total)
    if kind == "jats":
        try:
            parts = jats.sections(raw)
        except jats.NotAnArticle as error:  # fixed words
            raise ExtractionFailed(str(error)) from error
        return Read("\n\n".join(parts), sections=tuple(parts))
    return Read(to_text(kind, raw, charset, url))


def to_text(kind: str, raw: bytes, charset: str | None, url: str) -> str:
    """Readable text of a downloaded body of `kind` ('html' or 'text'; a PDF and an
    article go through `read_body`).

    Raises `ExtractionFailed` whatever went wrong inside the parsers.
    """
    try:
        if kind == "html":
            return html_to_markdown(raw, url)
        return decode_text(raw, charset).strip()
    except ExtractionFailed:
        raise
    except Exception as error:
        # lxml and trafilatura parse hostile bytes and raise types of their own
        # (RecursionError, parser errors, ...): one bad page must be skipped, not
        # end the research topic that asked for it.
        raise ExtractionFailed(f"text extraction failed ({type(error).__name__})") from error


def decode_text(raw: bytes, charset: str | None) -> str:
    """`raw` in the charset the server declared, or UTF-8 when Python cannot use that one."""
    try:
        return raw.decode(charset or "utf-8", errors="replace")
    except (LookupError, UnicodeError):
        # An unknown name (x-bogus), a codec that is not a text encoding (rot13, zlib) or
        # one that cannot replace bad bytes (idna): read the text as UTF-8, the web's default.
        return raw.decode("utf-8", errors="replace")


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, at a word boundary, marked when cut."""
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 2)]
    head, _, _ = cut.rpartition(" ")
    return (head if len(head) > limit // 2 else cut).rstrip() + CUT_MARK
