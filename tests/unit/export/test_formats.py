"""One path for every face: formats, sizes, where the file goes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from deep_research.export import ExportError, check_format, export, read_report, render
from deep_research.export.report import ReportInfo
from deep_research.text.limits import EXPORT_CHARS
from tests.support.reports import QUESTION, sample_report


def test_formats_by_name() -> None:
    assert check_format(" PDF ") == "pdf"
    with pytest.raises(ExportError, match="use one of html, pdf, docx"):
        check_format("odt")


def test_each_format_renders_its_kind_of_file() -> None:
    report = sample_report()
    assert render(report, "html").startswith(b"<!DOCTYPE html>")
    assert render(report, "pdf").startswith(b"%PDF-")
    assert render(report, "docx").startswith(b"PK")  # a zip, as every .docx is


def test_a_report_file_is_exported_beside_itself(tmp_path: Path) -> None:
    report = tmp_path / "2026-12-01-heat.md"
    report.write_text(sample_report(), encoding="utf-8")
    out = export(report, "html", info=ReportInfo(question=QUESTION))
    assert out == tmp_path / "2026-12-01-heat.html"
    assert f"<title>{QUESTION}</title>" in out.read_text(encoding="utf-8")
    chosen = export(report, "pdf", out=tmp_path / "sub" / "r.pdf")
    assert chosen.read_bytes().startswith(b"%PDF-")


def test_an_export_is_its_users_only_like_the_report(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, which would make it 0644
    try:
        out = export("# Report", "html", out=tmp_path / "new" / "r.html")
        again = export("# Report\n\nMore.", "html", out=out)  # written over, whole
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.parent.stat().st_mode) == 0o700
    assert "More." in again.read_text(encoding="utf-8")


def test_text_needs_somewhere_to_go(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="give out=PATH"):
        export("# Report", "html")
    assert export("# Report", "html", out=tmp_path / "r.html").is_file()


def test_too_large_is_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=f"up to {EXPORT_CHARS:,} characters"):
        render("x" * (EXPORT_CHARS + 1), "pdf")
    huge = tmp_path / "huge.md"
    huge.write_bytes(b"x" * (4 * EXPORT_CHARS + 1))
    with pytest.raises(ExportError, match="huge.md is"):
        read_report(huge)


def test_unreadable_reports_say_why(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="cannot read the report .*missing.md"):
        read_report(tmp_path / "missing.md")
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"caf\xe9 \x00 ok")
    assert read_report(bad) == "caf\ufffd \x00 ok"
    assert b"caf\xef\xbf\xbd \xef\xbf\xbd ok" in render(read_report(bad), "html")
