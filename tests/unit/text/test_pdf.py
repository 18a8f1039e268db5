"""text/pdf.py: a PDF's pages in order, within page, character and drawn-content bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.text import extract
from deep_research.text.pdf import PdfBounds, PdfRefused, read_pages
from tests.support.documents import write_pdf, write_shared_content_pdf

ROOMY = PdfBounds(pages=100, chars=100_000, content=10_000_000)


def test_pages_are_read_in_order_with_their_numbers(tmp_path: Path) -> None:
    raw = write_pdf(tmp_path / "a.pdf", ["One.", "Two.", "Three."]).read_bytes()
    assert read_pages(raw, ROOMY) == ([(1, "One."), (2, "Two."), (3, "Three.")], "")


def test_each_bound_stops_reading_and_says_why(tmp_path: Path) -> None:
    raw = write_pdf(tmp_path / "a.pdf", ["One.", "Two.", "Three."]).read_bytes()
    pages, cut = read_pages(raw, PdfBounds(pages=2, chars=100, content=10_000_000))
    assert [n for n, _ in pages] == [1, 2] and cut == "cut after page 2, the page limit"
    pages, cut = read_pages(raw, PdfBounds(pages=10, chars=4, content=10_000_000))
    assert pages == [(1, "One.")] and cut == "text cut at the size limit"
    shared = write_shared_content_pdf(tmp_path / "s.pdf", pages=40, drawn=200_000).read_bytes()
    pages, cut = read_pages(shared, PdfBounds(pages=100, chars=100_000, content=1_000_000))
    assert len(pages) == 4 and cut == "cut after page 4: its pages draw over 1 MB of content"


def test_what_is_not_read_at_all_is_refused_in_fixed_words(tmp_path: Path) -> None:
    with pytest.raises(PdfRefused, match="^not a PDF"):
        read_pages(b"<html>", ROOMY)
    one = write_shared_content_pdf(tmp_path / "one.pdf", pages=1, drawn=1_100_000).read_bytes()
    with pytest.raises(PdfRefused, match="^PDF pages draw over 1 MB of content$"):
        read_pages(one, PdfBounds(pages=100, chars=100_000, content=1_000_000))


def test_a_web_pdf_is_read_within_the_web_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A web PDF of 2,000 pages sharing one 70 MB stream (a 148 KB file) stops at the
    drawn-content bound, and its page count at the web's page bound."""
    hostile = write_shared_content_pdf(tmp_path / "h.pdf", pages=2_000).read_bytes()
    assert len(hostile) < 2_000_000  # within the fetch's byte cap: only these bounds hold it
    with pytest.raises(extract.ExtractionFailed, match="^PDF pages draw over 20 MB"):
        web_pages(hostile)
    shared = write_shared_content_pdf(tmp_path / "s.pdf", pages=2_000, drawn=8_000_000)
    assert web_pages(shared.read_bytes()) == ("Shared page text.",) * 2
    monkeypatch.setattr(extract, "WEB_PDF", PdfBounds(pages=2, chars=100_000, content=10**9))
    many = write_pdf(tmp_path / "m.pdf", [f"Page {n}." for n in range(1, 30)]).read_bytes()
    assert web_pages(many) == ("Page 1.", "Page 2.")
    with pytest.raises(extract.ExtractionFailed, match="^not a PDF"):
        web_pages(b"nothing")
    with pytest.raises(extract.ExtractionFailed, match=r"^text extraction failed \(\w+\)$"):
        web_pages(b"%PDF-1.4\n%broken\n")


def web_pages(raw: bytes) -> tuple[str, ...]:
    """A web PDF's pages as the fetcher reads them."""
    return extract.read_body("pdf", raw, None, "https://example.org/a.pdf").pdf_pages


def _listed_forms_pdf(forms: int, each: int) -> bytes:
    """One page whose resources list `forms` forms of `each` bytes (compressed to little)."""
    import zlib

    data = zlib.compress(b" " * each, 9)
    names = b" ".join(f"/F{i} {4 + i} 0 R".encode() for i in range(forms))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << "
        + names
        + f" >> >> /Contents {4 + forms} 0 R >>".encode(),
        *(
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Filter /FlateDecode /Length "
            + str(len(data)).encode()
            + b" >>\nstream\n"
            + data
            + b"\nendstream"
            for _ in range(forms)
        ),
        b"<< /Length 5 >>\nstream\nBT ET\nendstream",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF"
    return out + trailer.encode()


def test_forms_past_the_bound_are_not_all_decoded_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small file listing many large forms: each decoded form stays in pypdf's memory, so
    counting stops at the first form past the bound (summing them all first held ~2 GB
    for 28 forms of 70 MB in a 1.9 MB file)."""
    from pypdf.generic import StreamObject

    decoded: list[int] = []
    real = StreamObject.get_data

    def counted(self: StreamObject) -> bytes:
        data = real(self)
        decoded.append(len(data))
        return data

    monkeypatch.setattr(StreamObject, "get_data", counted)
    raw = _listed_forms_pdf(forms=12, each=2_000_000)
    with pytest.raises(PdfRefused, match="draw over 1 MB"):
        read_pages(raw, PdfBounds(pages=10, chars=10_000, content=1_000_000))
    assert len([size for size in decoded if size == 2_000_000]) == 1, decoded
