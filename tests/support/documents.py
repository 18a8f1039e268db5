"""Real documents written by the tests: PDFs with a text layer, DOCX files, hostile ones."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def write_pdf(path: Path, pages: list[str]) -> Path:
    """A PDF whose page N shows `pages[N-1]` in Helvetica (pypdf extracts it back)."""
    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for text in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        stream = DecodedStreamObject()
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream.set_data(f"BT /F1 10 Tf 40 700 Td ({escaped}) Tj ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def write_docx(path: Path, paragraphs: list[str]) -> Path:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))
    return path


def write_zip_bomb_docx(path: Path, unpacked: int = 300_000_000) -> Path:
    """A DOCX-named zip whose one part unpacks to `unpacked` zero bytes (a few hundred KB)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\0" * 1_000_000
            for _ in range(unpacked // len(block)):
                part.write(block)
    path.write_bytes(buffer.getvalue())
    return path
