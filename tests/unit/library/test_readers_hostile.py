"""Hostile files given to `library add`: each is reported in fixed words, never read past
its bounds, and never stops the batch."""

from __future__ import annotations

import io
import os
import secrets
import zipfile
from pathlib import Path

import pytest

from deep_research.library import readers, scan, worker
from deep_research.library.readers import Unreadable, read_document
from tests.support.documents import (
    write_docx,
    write_pdf,
    write_shared_content_pdf,
    write_wide_cell_docx,
    write_zip_bomb_docx,
)


def statuses(*paths: Path) -> dict[str, str]:
    return {c.path.name: c.status or "ok" for c in scan.candidates(list(paths))}


def test_malformed_pdfs_and_binary_junk_are_unreadable(tmp_path: Path) -> None:
    cases = {
        "truncated.pdf": write_pdf(tmp_path / "t.pdf", ["Some text."]).read_bytes()[:200],
        "header-only.pdf": b"%PDF-1.7\n%\xff\xff\n1 0 obj << /Length 99999999 >> stream\n",
        "not-a.pdf": b"\x89PNG\r\n\x1a\n" + os.urandom(500),
        "junk.txt": os.urandom(4000),
        "junk.html": b"<html>" + b"\0" * 4000,
        "junk.docx": os.urandom(4000),
    }
    for name, raw in cases.items():
        with pytest.raises(Unreadable) as caught:
            read_document(Path(name), raw)
        # Fixed words: no parser message (which may quote the file's bytes).
        assert len(str(caught.value)) < 80, name


def test_a_docx_zip_bomb_is_refused_before_unpacking(tmp_path: Path) -> None:
    bomb = write_zip_bomb_docx(tmp_path / "bomb.docx")
    assert bomb.stat().st_size < 2_000_000
    with pytest.raises(Unreadable, match="unpacked|zip bomb"):
        read_document(bomb, bomb.read_bytes())


def test_a_docx_that_compresses_suspiciously_well_is_refused(tmp_path: Path) -> None:
    bomb = write_zip_bomb_docx(tmp_path / "small-bomb.docx", unpacked=20_000_000)
    with pytest.raises(Unreadable, match="zip bomb"):
        read_document(bomb, bomb.read_bytes())


def test_text_past_the_limit_is_cut_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "MAX_TEXT_CHARS", 1000)
    big = tmp_path / "big.txt"
    big.write_text("word " * 10_000)
    document = read_document(big, big.read_bytes())
    assert document.cut == "text cut at the size limit" and document.chars == 1000


def test_oversized_unsupported_fifo_and_symlinks_out_of_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "MAX_FILE_BYTES", 100)
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    outside = tmp_path / "secret.txt"
    outside.write_text("outside the folder")
    (docs / "big.md").write_text("x" * 101)
    (docs / "ok.md").write_text("fine")
    (docs / "photo.jpg").write_bytes(b"\xff\xd8")
    (docs / "sub" / "link.txt").symlink_to(outside)
    (docs / "sub" / "inner.txt").symlink_to(docs / "ok.md")
    (docs / "sub" / "dangling.txt").symlink_to(tmp_path / "gone.txt")
    (docs / "loop").symlink_to(docs)  # a folder symlink is not followed
    os.mkfifo(docs / "pipe.txt")  # reading it would block forever
    found = statuses(docs)
    assert found == {
        "big.md": "oversized",
        "ok.md": "ok",  # found once, though the symlink inner.txt leads to it too
        "photo.jpg": "unsupported",
        "link.txt": "skipped",
        "dangling.txt": "skipped",
        "pipe.txt": "skipped",
    }
    assert statuses(tmp_path / "missing") == {"missing": "unreadable"}


def test_a_docx_renamed_from_another_format_is_unreadable(tmp_path: Path) -> None:
    real = write_docx(tmp_path / "a.docx", ["Fine."])
    pdf_named_docx = tmp_path / "b.docx"
    pdf_named_docx.write_bytes(write_pdf(tmp_path / "x.pdf", ["x"]).read_bytes())
    assert read_document(real, real.read_bytes()).sections[0].text == "Fine."
    with pytest.raises(Unreadable, match="not a zip"):
        read_document(pdf_named_docx, pdf_named_docx.read_bytes())


def test_html_is_held_to_a_smaller_size_than_other_files(tmp_path: Path) -> None:
    """lxml holds a whole HTML tree in memory before any node limit applies: about 45
    bytes of memory per byte of dense markup (915 MB for 20 MB), so 50 MB would take 2 GB."""
    dense = tmp_path / "saved.html"
    dense.write_bytes(b"<html><body>" + b"<i>x</i>" * (readers.MAX_HTML_BYTES // 8) + b"</body>")
    text = tmp_path / "same-size.txt"
    text.write_bytes(b"word " * (readers.MAX_HTML_BYTES // 5 + 1))
    assert statuses(dense, text) == {"saved.html": "oversized", "same-size.txt": "ok"}


def test_a_docx_with_more_xml_than_can_be_parsed_is_refused(tmp_path: Path) -> None:
    """python-docx parses the XML parts whole: their size, not only the archive's, is
    bounded (random text, so the compression ratio looks like a real document's)."""
    buffer = io.BytesIO()
    words = " ".join(secrets.token_hex(4) for _ in range(readers.MAX_DOCX_XML // 9 + 1000))
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", f"<w:document><w:t>{words}</w:t></w:document>")
    with pytest.raises(Unreadable, match="XML"):
        read_document(Path("big.docx"), buffer.getvalue())


def test_a_file_swapped_for_a_symlink_after_the_scan_is_not_read(tmp_path: Path) -> None:
    """Between the folder walk (which resolved every path) and the read, another process
    can replace a file by a symlink to one outside the folder, or by a FIFO that would
    block the read forever: the read opens no symlink and reads regular files only."""
    docs = tmp_path / "docs"
    docs.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the folder")
    notes = docs / "notes.txt"
    notes.write_text("inside")
    (candidate,) = scan.candidates([docs])
    assert candidate.status == "" and candidate.path == notes
    notes.unlink()
    notes.symlink_to(secret)
    with pytest.raises(OSError):
        scan.load(candidate.path)


async def test_a_table_cell_spanning_two_billion_columns_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """984 bytes that python-docx's `row.cells` expands into a two-billion-entry list
    (past 2 GB in 20 s): the cells are read as written. Read in the worker, so that a
    regression fails within the deadline instead of taking the machine's memory."""
    monkeypatch.setattr(worker, "MAX_READ_SECONDS", 30)
    wide = write_wide_cell_docx(tmp_path / "wide.docx")
    assert wide.stat().st_size < 1500
    async with worker.Reader() as reader:
        document = await reader.read(wide, wide.read_bytes())
    assert document.sections[0].text == "Before the table.\n\nA very wide cell."


def test_pages_sharing_one_huge_content_stream_are_cut_at_the_content_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pypdf parses a shared content stream (or form) again for every page that draws it:
    each use counts, so 2,000 pages of one 70 MB stream stop at the limit (here 1 MB)."""
    monkeypatch.setattr(readers, "MAX_PDF_CONTENT", 1_000_000)
    shared = write_shared_content_pdf(tmp_path / "shared.pdf", pages=40, drawn=200_000)
    document = read_document(shared, shared.read_bytes())
    assert [s.page for s in document.sections] == [1, 2, 3, 4]
    assert document.cut == "cut after page 4: its pages draw over 1 MB of content"
    assert document.sections[0].text == "Shared page text."
    form = write_shared_content_pdf(tmp_path / "form.pdf", pages=40, drawn=200_000, form=True)
    drawn_as_a_form = read_document(form, form.read_bytes())
    assert [s.page for s in drawn_as_a_form.sections] == [1, 2, 3, 4]
    assert drawn_as_a_form.sections[0].text == "Shared page text."
    huge_first_page = write_shared_content_pdf(tmp_path / "one.pdf", pages=1, drawn=1_100_000)
    with pytest.raises(Unreadable, match="^PDF pages draw over 1 MB of content$"):
        read_document(huge_first_page, huge_first_page.read_bytes())


def test_pages_past_the_page_limit_are_cut_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "MAX_PDF_PAGES", 2)
    pdf = write_pdf(tmp_path / "three.pdf", ["One.", "Two.", "Three."])
    document = read_document(pdf, pdf.read_bytes())
    assert [s.text for s in document.sections] == ["One.", "Two."]
    assert document.cut == "cut after page 2, the page limit"
