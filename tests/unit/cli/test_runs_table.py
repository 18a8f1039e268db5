"""`cli.runs_table`: the `runs` table's cells and the command's own answers."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from deep_research.cli.args import UsageError
from deep_research.cli.runs_table import (
    DETAIL_CHARS,
    QUESTION_CHARS,
    RUNS_HEADER,
    runs_table,
    show_runs,
)


def test_header_then_one_aligned_line_per_run() -> None:
    rows = [
        ("abc12345", "2026-01-02 03:04", "done", "12", "7", "$0.0123", "why?", "reports/why.md")
    ]
    header, line = runs_table(rows)
    for cell in RUNS_HEADER:
        assert cell in header
    for column, cell in zip(RUNS_HEADER, rows[0], strict=True):
        if column in ("searches", "sources", "cost"):  # numbers, right-aligned under their headers
            end = header.index(column) + len(column)
            assert line[:end].endswith(f" {cell}"), line
            continue
        assert line.index(cell) == header.index(column), column


def test_long_or_multi_line_cells_are_cut_to_one_line() -> None:
    question = "q" * (QUESTION_CHARS * 2)
    detail = "first line " * 20 + "\nTraceback"
    [_, line] = runs_table([("abc12345", "when", "failed", "0", "-", "$0.0000", question, detail)])
    assert "\n" not in line and "Traceback" not in line
    assert "q" * (QUESTION_CHARS + 1) not in line
    header = runs_table([])[0]
    assert len(line[header.index("report or error") :]) == DETAIL_CHARS


def test_an_empty_detail_leaves_no_trailing_space() -> None:
    [_, line] = runs_table([("abc12345", "when", "running", "3", "-", "unknown", "why?", "")])
    assert line == line.rstrip() and line.endswith("why?")


def test_runs_takes_no_arguments() -> None:
    with pytest.raises(UsageError, match="`runs` takes no arguments, got 'extra'"):
        show_runs(["extra"], Console(file=io.StringIO()))


def test_a_directory_without_runs_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert show_runs([], Console(file=out, width=200)) == 0
    assert out.getvalue().strip() == "No runs yet in .deep_research/."


def test_the_example_in_the_docs_is_this_table() -> None:
    """docs/cli.md shows `runs` as `runs_table` prints it (regenerate it from the rows)."""
    docs = (Path(__file__).resolve().parents[3] / "docs" / "cli.md").read_text()
    rows = [
        (
            "3f9c2a1b",
            "2025-06-01 10:12",
            "stopped mid-run",
            "4",
            "-",
            "$0.0412",
            "Are heat pumps worth it in Norway?",
            "ModelEndpointError: Cannot reach the model server at http://localhost:8080/v1 "
            "(ConnectError)",
        ),
        (
            "8d04e7c5",
            "2025-06-01 10:40",
            "done",
            "12",
            "9",
            "$0.1875",
            "How well do heat pumps work in cold climates?",
            "reports/2025-06-01-how-well-do-heat-pumps-work-in-cold.md",
        ),
    ]
    assert "\n".join(["```", *runs_table(rows), "```"]) in docs


def test_each_follow_up_is_a_line_under_its_thread() -> None:
    from deep_research.cli.runs import RunRecord
    from deep_research.cli.runs_table import follow_up_lines

    record = RunRecord("abc12345", "First?", 1.0)
    record.answers = [("First?", "r/1.md"), ("Second\nline?", "r/2.md"), ("Third?", None)]
    second, third = follow_up_lines(record)
    assert second.split() == ["follow-up:", "Second", "r/2.md"], "its first line, as above"
    assert third.split() == ["follow-up:", "Third?", "no", "report", "yet"]
