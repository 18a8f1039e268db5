"""Real documents written by the tests: PDFs with a text layer, DOCX files, hostile ones."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
    StreamObject,
)


def write_pdf(path: Path, pages: list[str], figure: int = 0, noise: bool = True) -> Path:
    """A PDF whose page N shows `pages[N-1]` in Helvetica (pypdf extracts it back); with
    `figure`, page 1 also holds an image of that many random bytes (a paper's figures: a
    file of megabytes whose cross-reference table comes after them), zeros without `noise`
    (a file that compresses to almost nothing)."""
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
        if figure and len(writer.pages) == 1:
            page[NameObject("/Resources")][NameObject("/XObject")] = DictionaryObject(
                {NameObject("/Fig1"): writer._add_object(_image(figure, noise))}
            )
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def _image(size: int, noise: bool) -> StreamObject:
    """An image XObject of `size` bytes (gray, one row): pypdf keeps it as written."""
    image = StreamObject()
    image.set_data(os.urandom(size) if noise else bytes(size))
    image.update(
        {
            NameObject("/Type"): NameObject("/XObject"),
            NameObject("/Subtype"): NameObject("/Image"),
            NameObject("/Width"): NumberObject(size),
            NameObject("/Height"): NumberObject(1),
            NameObject("/ColorSpace"): NameObject("/DeviceGray"),
            NameObject("/BitsPerComponent"): NumberObject(8),
        }
    )
    return image


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


WORD = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def write_wide_cell_docx(path: Path, span: int = 2_000_000_000) -> Path:
    """A 1 KB DOCX written by hand: a paragraph, then a table whose one cell spans `span`
    grid columns (python-docx's `row.cells` lists the cell once per column)."""
    types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.wordprocessingml.document.main+xml"/></Types>'
    )
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    body = (
        f"<w:document {WORD}><w:body><w:p><w:r><w:t>Before the table.</w:t></w:r></w:p>"
        f'<w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>'
        "<w:p><w:r><w:t>A very wide cell.</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
        "</w:body></w:document>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", types)
        archive.writestr("_rels/.rels", rels)
        archive.writestr("word/document.xml", body)
    path.write_bytes(buffer.getvalue())
    return path


def write_shared_content_pdf(
    path: Path, pages: int = 2_000, drawn: int = 70_000_000, form: bool = False
) -> Path:
    """A PDF of `pages` pages that all draw one content stream: a line of text, then
    `drawn` bytes of blanks pypdf parses for every page (flate makes them ~70 KB). With
    `form`, the stream is a form XObject each page's own small content draws."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    resources = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
    )
    stream = DecodedStreamObject()
    stream.set_data(b"BT /F1 10 Tf 40 700 Td (Shared page text.) Tj ET\n" + b" " * drawn)
    shared = stream.flate_encode()
    if form:
        shared[NameObject("/Type")] = NameObject("/XObject")
        shared[NameObject("/Subtype")] = NameObject("/Form")
        shared[NameObject("/BBox")] = ArrayObject([NumberObject(n) for n in (0, 0, 612, 792)])
        shared[NameObject("/Resources")] = resources
        resources = DictionaryObject(
            {
                NameObject("/XObject"): DictionaryObject(
                    {NameObject("/Fm1"): writer._add_object(shared)}
                )
            }
        )
        shared = DecodedStreamObject()
        shared.set_data(b"/Fm1 Do")
    reference = writer._add_object(shared)
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = resources
        page[NameObject("/Contents")] = reference
    with path.open("wb") as handle:
        writer.write(handle)
    return path
