"""`deep-research export` and `--export`: the footer's facts from the run's traffic log."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from deep_research.cli import export as cli_export
from deep_research.cli.args import HOME, UsageError
from deep_research.cli.main import main
from deep_research.cli.report_file import finished
from deep_research.cli.traffic import TrafficLog
from deep_research.config.settings import load_context
from deep_research.export import ExportUnavailableError
from tests.support.reports import INFO, QUESTION, sample_report


@pytest.fixture
def saved_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A report saved by a run whose log says what the session writes."""
    monkeypatch.chdir(tmp_path)
    report = Path("reports") / "2026-12-01-heat-pumps.md"
    report.parent.mkdir()
    report.write_text(sample_report(), encoding="utf-8")
    log = TrafficLog(HOME.log_path("a1b2c3d4"))
    log.write("run", action="start", thread="a1b2c3d4", question=QUESTION, settings={})
    for _ in range(3):
        log.write("progress", event="search", query="q")
    context = load_context({"orchestrator_model": "local:big", "researcher_model": "local:small"})
    values = {"citation_check": INFO["citation_check"], "status": "complete"}
    log.write("run", **finished(report, values, context))
    log.close()
    return report


def test_the_footer_comes_from_the_run_that_saved_the_report(saved_run: Path) -> None:
    info = cli_export.info_for(HOME, saved_run)
    assert info.question == QUESTION and info.thread_id == "a1b2c3d4"
    assert info.searches == 3
    assert info.models["orchestrator"] == "local:big"
    assert info.models["researcher"] == "local:small"
    assert info.citation_check == INFO["citation_check"]
    assert info.date  # the end record's day
    assert cli_export.info_for(HOME, Path("elsewhere.md")).thread_id == ""


def test_the_command_writes_the_file_beside_or_where_asked(
    saved_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(saved_run), "--to", "html"]) == 0
    page = saved_run.with_suffix(".html").read_text(encoding="utf-8")
    assert f"<title>{QUESTION}</title>" in page and "thread a1b2c3d4" in page
    assert "Searches: 3" in page and "orchestrator local:big" in page
    assert f"Exported: {saved_run.with_suffix('.html')}" in capsys.readouterr().out
    assert main(["export", str(saved_run), "--to", "docx", "--out", "out/r.docx"]) == 0
    assert Path("out/r.docx").read_bytes().startswith(b"PK")


def test_bad_arguments_are_one_line(saved_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(saved_run), "--to", "odt"]) == 2
    assert "invalid choice: 'odt'" in capsys.readouterr().err
    assert main(["export", "missing.md", "--to", "pdf"]) == 2
    assert "no report at missing.md" in capsys.readouterr().err


def test_export_formats_are_checked_before_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli_export.export_formats("html, PDF,html") == ["html", "pdf"]
    with pytest.raises(UsageError, match="--export: unknown export format 'odt'"):
        cli_export.export_formats("html,odt")

    def missing(to: str) -> None:
        raise ExportUnavailableError("PDF export needs weasyprint")

    monkeypatch.setattr("deep_research.export.check_available", missing)
    with pytest.raises(ExportUnavailableError):
        cli_export.export_formats("pdf")


def test_export_beside_writes_each_format(saved_run: Path) -> None:
    out = io.StringIO()
    cli_export.export_beside(saved_run, ["html", "pdf"], Console(file=out, width=200))
    assert saved_run.with_suffix(".pdf").read_bytes().startswith(b"%PDF-")
    assert out.getvalue().count("Exported:") == 2


def test_an_export_beside_the_report_never_replaces_a_file(tmp_path: Path) -> None:
    report = tmp_path / "notes.md"
    report.write_text("# Q\n")
    assert cli_export.free_beside(report, "pdf") == tmp_path / "notes.pdf"
    (tmp_path / "notes.pdf").write_bytes(b"mine")
    assert cli_export.free_beside(report, "pdf") == tmp_path / "notes-2.pdf"
    # --out notes.html --export html: the Markdown was saved as notes.html itself.
    saved = tmp_path / "notes.html"
    saved.write_text("# the Markdown report\n")
    assert cli_export.free_beside(saved, "html") == tmp_path / "notes-2.html"


def test_a_file_link_outside_the_library_is_exported_as_text(
    saved_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved_run.write_text("[a](file:///etc/passwd) [b](https://a.example/)", encoding="utf-8")
    assert main(["export", str(saved_run), "--to", "html"]) == 0
    page = saved_run.with_suffix(".html").read_text(encoding="utf-8")
    assert 'href="https://a.example/"' in page and "file:///etc/passwd" in page
    assert 'href="file:' not in page  # the library (empty here) holds no such document


def test_an_unreadable_library_is_said_and_the_export_still_made(
    saved_run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = saved_run.parent / "broken"
    broken.mkdir()
    (broken / "chroma.sqlite3").write_bytes(b"garbage" * 100)
    monkeypatch.setenv("MEMORY_DIR", str(broken))
    assert main(["export", str(saved_run), "--to", "html"]) == 0
    out = capsys.readouterr().out
    assert "Library links exported as text: the library is unavailable" in out
    assert 'href="file:' not in saved_run.with_suffix(".html").read_text(encoding="utf-8")
