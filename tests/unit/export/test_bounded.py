"""Every format renders in a child with a deadline and a memory cap; each limit reached is
one readable error naming it, and nothing is left running."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.errors import ReadableError
from deep_research.export import ExportError, ExportLimitError, ReportInfo, render
from deep_research.export.bounded import render_in_child
from tests.support.reports import INFO, LIBRARY_URL, sample_report

# Minutes of layout on any machine: a 1 s deadline always stops it.
LONG_TABLE = "| a | b |\n|---|---|\n" + "\n".join(f"| {n} | row {n} |" for n in range(30_000))


def test_a_render_past_its_deadline_is_stopped_with_the_limit_named() -> None:
    with pytest.raises(ExportLimitError, match=r"pdf export took over its limit of 1 s"):
        render_in_child(LONG_TABLE, "pdf", ReportInfo(), seconds=1)


def test_a_module_in_the_working_directory_is_never_run_by_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    for module in ("json", "weasyprint", "markdown_it"):
        (tmp_path / f"{module}.py").write_text(f"open({str(marker)!r}, 'a').write('{module}')\n")
    monkeypatch.chdir(tmp_path)
    assert render_in_child("# Title\n\nText.", "html", ReportInfo()).startswith(b"<!DOCTYPE")
    assert not marker.exists(), marker.read_text()


def test_a_render_past_its_memory_cap_is_stopped_with_the_limit_named() -> None:
    with pytest.raises(ExportLimitError, match=r"limit of 120 MB of memory"):
        render_in_child(sample_report(), "pdf", ReportInfo(), memory_mb=120)


def test_the_child_gets_the_whole_report_info() -> None:
    page = render_in_child(sample_report(), "html", ReportInfo(**INFO)).decode()
    assert f'href="{LIBRARY_URL}"' in page  # the library crossed over
    assert "thread a1b2c3d4" in page and "Searches: 12" in page


def test_a_limit_error_is_one_readable_line_the_faces_report() -> None:
    # The CLI (`Export failed: …`) and the MCP tool (the report's text kept) catch these.
    assert issubclass(ExportLimitError, ReadableError)
    with pytest.raises(ExportError, match="unknown export format"):
        render("# r", "odt")  # type: ignore[arg-type]
