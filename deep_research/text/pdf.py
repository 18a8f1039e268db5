"""A PDF's text page by page, within bounds a hostile file cannot pass: the pages read,
the characters kept, and the content the pages draw (the library's documents and PDFs
found on the web are read by this one function)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from deep_research.errors import DeepResearchError

if TYPE_CHECKING:
    from pypdf import PageObject

CUT_TEXT = "text cut at the size limit"


class PdfRefused(DeepResearchError):
    """The PDF is not read at all; the message is fixed words, safe to show."""


@dataclass(frozen=True)
class PdfBounds:
    pages: int  # pages read at most
    chars: int  # characters of text kept, all pages together
    # pypdf parses a page's content stream(s) anew for every page that draws them: 2,000
    # pages sharing one 70 MB stream are 140 GB of parsing in a 148 KB file. What the pages
    # draw is counted, every use of a shared stream included, and reading stops here.
    content: int


class PdfRead(NamedTuple):
    """What `read_pdf` read: `(page number, text)` in order (1-based), why reading stopped
    early ('' when every page was read), and how many pages the PDF has."""

    pages: list[tuple[int, str]]
    cut: str
    total: int


def read_pages(raw: bytes, bounds: PdfBounds) -> tuple[list[tuple[int, str]], str]:
    """`(page number, text)` for the PDF's pages in order (1-based), and why reading
    stopped early ('' when every page was read). Raises as `read_pdf`."""
    read = read_pdf(raw, bounds)
    return read.pages, read.cut


def read_pdf(raw: bytes, bounds: PdfBounds) -> PdfRead:
    """The PDF's pages' text within `bounds`. Raises `PdfRefused`; pypdf's own errors
    (many types) propagate for the caller to name."""
    from pypdf import PdfReader  # imported when a PDF comes, not with every search

    if not raw.startswith(b"%PDF-"):
        raise PdfRefused("not a PDF (no %PDF header)")
    reader = PdfReader(io.BytesIO(raw))
    if reader.is_encrypted and not reader.decrypt(""):
        raise PdfRefused("encrypted PDF")
    pages: list[tuple[int, str]] = []
    total = drawn = 0
    # Counting the pages walks the page tree, as reading the first one does anyway.
    count = len(reader.pages)
    forms: dict[int, tuple[object, int]] = {}  # a list of forms (often shared), its bytes
    for number, page in enumerate(reader.pages, 1):
        if total >= bounds.chars:
            return PdfRead(pages, CUT_TEXT, count)
        if number > bounds.pages:
            return PdfRead(pages, f"cut after page {bounds.pages:,}, the page limit", count)
        drawn += content_bytes(page, bounds.content - drawn, forms)
        if drawn > bounds.content:
            over = f"draw over {bounds.content // 1_000_000} MB of content"
            if number == 1:
                raise PdfRefused(f"PDF pages {over}")
            return PdfRead(pages, f"cut after page {number - 1:,}: its pages {over}", count)
        text = (page.extract_text() or "").strip()
        total += len(text)
        pages.append((number, text))
    return PdfRead(pages, "", count)


def content_bytes(page: PageObject, room: int, forms: dict[int, tuple[object, int]]) -> int:
    """The bytes of content `page` draws, counted until they pass `room`: its content
    streams and the forms its resources list (parsed again wherever they are drawn).

    Decoding is cheap next to parsing, and pypdf keeps what it decoded: a stream shared by
    many pages is decoded once but counted for each page; a shared list of forms is
    looked through once (`forms`, by the list's identity).
    """
    from pypdf.generic import ArrayObject, DictionaryObject, StreamObject

    contents = _resolved(page.get("/Contents"))
    streams = list(contents) if isinstance(contents, ArrayObject) else [contents]
    total = 0
    for stream in map(_resolved, streams):
        if isinstance(stream, StreamObject):
            total += len(stream.get_data())
        if total > room:
            return total
    resources = _resolved(page.get("/Resources"))
    if not isinstance(resources, DictionaryObject):
        return total
    listed = _resolved(resources.get("/XObject"))
    if isinstance(listed, DictionaryObject):
        if id(listed) not in forms:  # the list is kept too, so its id is not reused
            forms[id(listed)] = (listed, _forms_bytes(listed, room - total))
        total += forms[id(listed)][1]
    return total


def _forms_bytes(listed: Any, room: int) -> int:
    """The decoded bytes of the forms a resource list names, counted form by form and no
    further once they pass `room` (pypdf keeps each stream it decodes: summing them all
    first would hold every one of them in memory, whatever the bound)."""
    from pypdf.generic import StreamObject

    size = 0
    for form in map(_resolved, listed.values()):
        if isinstance(form, StreamObject) and form.get("/Subtype") == "/Form":
            size += len(form.get_data())
            if size > room:
                break
    return size


def _resolved(value: object) -> object:
    return value.get_object() if hasattr(value, "get_object") else value
