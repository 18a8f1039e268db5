"""From a file on disk to the text of its parts: PDF pages, or one section for the rest.

Every reader is bounded (bytes read, pages, characters, a DOCX archive's unpacked size)
and any parser failure becomes `Unreadable` with fixed words naming the error's type: a
hostile or broken file is reported and skipped, never the end of a batch.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from deep_research.errors import DeepResearchError
from deep_research.text import extract

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
    cut: bool = False  # text past MAX_TEXT_CHARS was left out

    @property
    def chars(self) -> int:
        return sum(len(section.text) for section in self.sections)


def kind_of(path: Path) -> str | None:
    """The format a file's name says it has, or None when it is not one we read."""
    return FORMATS.get(path.suffix.lower())


def read_document(path: Path, raw: bytes) -> Document:
    """The text of `raw`, the bytes of `path` (already size-checked by the caller)."""
    kind = kind_of(path)
    if kind is None:
        raise Unreadable("unsupported format")
    try:
        sections = _READERS[kind](raw, path)
    except Unreadable:
        raise
    except Exception as error:  # pypdf, lxml, python-docx: many types of their own
        raise Unreadable(f"{kind} could not be parsed ({type(error).__name__})") from error
    sections, cut = _bounded([s for s in sections if s.text.strip()])
    if not sections:
        raise Unreadable("no text found")
    return Document(title=path.name, kind=kind, sections=sections, cut=cut)


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


def _pdf(raw: bytes, path: Path) -> list[Section]:
    from pypdf import PdfReader

    if not raw.startswith(b"%PDF-"):
        raise Unreadable("not a PDF (no %PDF header)")
    reader = PdfReader(io.BytesIO(raw))
    if reader.is_encrypted and not reader.decrypt(""):
        raise Unreadable("encrypted PDF")
    sections, total = [], 0
    for number, page in enumerate(reader.pages, 1):
        if number > MAX_PDF_PAGES or total >= MAX_TEXT_CHARS:
            break
        text = (page.extract_text() or "").strip()
        total += len(text)
        sections.append(Section(text, number))
    return sections


def _text(raw: bytes, path: Path) -> list[Section]:
    text = raw.decode("utf-8", errors="replace")
    sample = text[:100_000]
    junk = sample.count("\x00") + sample.count("\ufffd")
    if sample and junk / len(sample) > MAX_JUNK_SHARE:
        raise Unreadable("binary content, not text")
    return [Section(text.strip())]


def _html(raw: bytes, path: Path) -> list[Section]:
    if len(raw) > MAX_HTML_BYTES:  # `library add` says "oversized" before reading it
        raise Unreadable("HTML too large to parse")
    if b"\x00" in raw[:100_000]:
        raise Unreadable("binary content, not HTML")
    # The same extraction as web pages: hidden text (where injections hide) is left out.
    return [Section(extract.html_to_markdown(raw, path.as_uri()))]


def _docx(raw: bytes, path: Path) -> list[Section]:
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
        for row in table.rows:
            lines.append(" | ".join(cell.text for cell in row.cells))
    return [Section("\n\n".join(line for line in lines if line.strip()))]


_READERS = {"pdf": _pdf, "markdown": _text, "text": _text, "html": _html, "docx": _docx}
