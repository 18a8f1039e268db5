"""From a file on disk to the text of its parts: PDF pages, or one section for the rest.

Every reader is bounded (bytes read, pages, characters, a DOCX archive's unpacked size)
and any parser failure becomes `Unreadable` with fixed words naming the error's type: a
hostile or broken file is reported and skipped, never the end of a batch.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deep_research.errors import DeepResearchError
from deep_research.text import extract, pdf

if TYPE_CHECKING:
    from docx.table import Table

FORMATS = {
    ".pdf": "pdf",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
}
MAX_FILE_BYTES = 50_000_000  # larger files are reported as oversized, not read
# lxml builds the whole tree before extraction's node limit: ~45 bytes of memory per byte
# of dense markup (measured: 915 MB for 20 MB), so HTML has a limit of its own.
MAX_HTML_BYTES = 5_000_000
MAX_TEXT_CHARS = 2_000_000  # text kept per document (~2,000 chunks); the rest is cut
MAX_PDF_PAGES = 2_000
# What a PDF's pages may draw, in bytes (text/pdf.py says why).
MAX_PDF_CONTENT = 100_000_000
CUT_TEXT = pdf.CUT_TEXT
# A DOCX is a zip whose parts are unpacked in memory: their declared sizes are checked
# first. A part that declares little and unpacks a lot is no way round it: Python's
# zipfile stops at the declared size and fails the CRC check.
MAX_DOCX_UNPACKED = 100_000_000
MAX_DOCX_PARTS = 2_000
# The XML parts python-docx parses whole (the rest is media): bounded as HTML is.
MAX_DOCX_XML = 10_000_000
MAX_DOCX_RATIO = 200  # unpacked : packed; real documents are under 20
# Text with this share of NUL bytes or undecodable characters is binary, not text.
MAX_JUNK_SHARE = 0.01


class Unreadable(DeepResearchError):
    """A file could not be read as its format; the message is fixed words, safe to show."""


@dataclass(frozen=True)
class Section:
    text: str
    page: int = 0  # 1-based PDF page; 0 for formats without pages


@dataclass(frozen=True)
class Document:
    title: str
    kind: str
    sections: list[Section]
    cut: str = ""  # why the rest was left out ("" when the whole text was read)

    @property
    def chars(self) -> int:
        return sum(len(section.text) for section in self.sections)


Read = tuple[list[Section], str]  # a reader's sections, and why it stopped early ("" if not)


def kind_of(path: Path) -> str | None:
    """The format a file's name says it has, or None when it is not one we read."""
    return FORMATS.get(path.suffix.lower())


def read_document(path: Path, raw: bytes) -> Document:
    """The text of `raw`, the bytes of `path` (already size-checked by the caller)."""
    kind = kind_of(path)
    if kind is None:
        raise Unreadable("unsupported format")
    try:
        sections, cut = _READERS[kind](raw, path)
    except (Unreadable, MemoryError):  # MemoryError: the worker's limit, said as such
        raise
    except Exception as error:  # pypdf, lxml, python-docx: many types of their own
        raise Unreadable(f"{kind} could not be parsed ({type(error).__name__})") from error
    sections, cut_chars = _bounded([s for s in sections if s.text.strip()])
    if not sections:
        raise Unreadable("no text found")
    return Document(path.name, kind, sections, CUT_TEXT if cut_chars else cut)


def _bounded(sections: list[Section]) -> tuple[list[Section], bool]:
    kept: list[Section] = []
    total = 0
    for section in sections:
        room = MAX_TEXT_CHARS - total
        if room <= 0:
            return kept, True
        kept.append(Section(section.text[:room], section.page))
        total += len(kept[-1].text)
        if len(section.text) > room:
            return kept, True
    return kept, False


def _pdf(raw: bytes, path: Path) -> Read:
    bounds = pdf.PdfBounds(pages=MAX_PDF_PAGES, chars=MAX_TEXT_CHARS, content=MAX_PDF_CONTENT)
    try:
        pages, cut = pdf.read_pages(raw, bounds)
    except pdf.PdfRefused as error:
        raise Unreadable(str(error)) from error
    return [Section(text, number) for number, text in pages], cut


def _text(raw: bytes, path: Path) -> Read:
    text = raw.decode("utf-8", errors="replace")
    sample = text[:100_000]
    junk = sample.count("\x00") + sample.count("\ufffd")
    if sample and junk / len(sample) > MAX_JUNK_SHARE:
        raise Unreadable("binary content, not text")
    return [Section(text.strip())], ""


def _html(raw: bytes, path: Path) -> Read:
    if len(raw) > MAX_HTML_BYTES:  # `library add` says "oversized" before reading it
        raise Unreadable("HTML too large to parse")
    if b"\x00" in raw[:100_000]:
        raise Unreadable("binary content, not HTML")
    # The same extraction as web pages: hidden text (where injections hide) is left out.
    return [Section(extract.html_to_markdown(raw, path.as_uri()))], ""


def _docx(raw: bytes, path: Path) -> Read:
    import docx

    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as error:
        raise Unreadable("not a DOCX (not a zip archive)") from error
    with archive:
        parts = archive.infolist()
        unpacked = sum(part.file_size for part in parts)
        packed = sum(part.compress_size for part in parts) or 1
        if len(parts) > MAX_DOCX_PARTS or unpacked > MAX_DOCX_UNPACKED:
            raise Unreadable("DOCX archive too large when unpacked")
        if unpacked / packed > MAX_DOCX_RATIO:
            raise Unreadable("DOCX archive compressed suspiciously well (a zip bomb?)")
        xml = sum(part.file_size for part in parts if part.filename.endswith((".xml", ".rels")))
        if xml > MAX_DOCX_XML:
            raise Unreadable("DOCX text (XML) too large to parse")
    document = docx.Document(io.BytesIO(raw))
    lines = [paragraph.text for paragraph in document.paragraphs]
    for table in document.tables:
        lines.extend(_rows(table))
    return [Section("\n\n".join(line for line in lines if line.strip()))], ""


def _rows(table: Table) -> Iterator[str]:
    """A table's rows as text, one entry per cell written in the file.

    python-docx's `row.cells` repeats a cell once per grid column it spans: a cell
    declaring `gridSpan` 2,000,000,000 in a 1 KB file asks for a list of two billion
    entries. The cells as written are read instead; a cell continuing a vertical merge
    holds no text of its own (its text is the cell above's, already read).
    """
    from docx.table import _Cell

    for row in table._tbl.tr_lst:
        cells = (_Cell(tc, table).text for tc in row.tc_lst if tc.vMerge != "continue")
        yield " | ".join(cells)


_READERS = {"pdf": _pdf, "markdown": _text, "text": _text, "html": _html, "docx": _docx}
