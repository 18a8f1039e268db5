"""`cli.report_file`: where a report is saved, never over another file."""

from __future__ import annotations

import os
import stat
from datetime import date
from pathlib import Path

import pytest

from deep_research.cli.report_file import save_report


def test_a_report_is_named_by_date_and_question_and_never_overwritten(tmp_path: Path) -> None:
    first = save_report(tmp_path / "reports", "Are heat-pumps worth it? (2026)", "one")
    second = save_report(tmp_path / "reports", "are heat pumps worth it 2026", "two")
    assert first.name == f"{date.today().isoformat()}-are-heat-pumps-worth-it-2026.md"
    assert second.name == first.name.replace(".md", "-2.md")
    assert (first.read_text(), second.read_text()) == ("one", "two")


def test_a_chosen_name_is_used_and_never_overwritten(tmp_path: Path) -> None:
    first = save_report(tmp_path / "new" / "dir", "q", "one", "heat.md")
    assert first == tmp_path / "new" / "dir" / "heat.md" and first.read_text() == "one"
    # A file that took the name while the run went on keeps it; the report goes beside it.
    second = save_report(tmp_path / "new" / "dir", "q", "two", "heat.md")
    assert (second.name, first.read_text(), second.read_text()) == ("heat-2.md", "one", "two")


def test_a_question_without_words_is_still_a_report(tmp_path: Path) -> None:
    assert save_report(tmp_path, "¿¡…!?", "x").name == f"{date.today().isoformat()}-report.md"
    long = save_report(tmp_path, " ".join(f"w{n}" for n in range(20)), "x")
    assert long.stem.endswith("-w0-w1-w2-w3-w4-w5-w6-w7"), "eight words at most"


@pytest.mark.parametrize(
    ("status", "says"),
    [
        ("no_sources", "it cites no source"),
        ("unverified", "every citation in it was removed"),
    ],
)
def test_a_report_that_is_not_complete_says_so_in_its_first_lines(
    tmp_path: Path, status: str, says: str
) -> None:
    path = save_report(tmp_path, "q", "# Heat pumps\n\nThey work.", status=status)
    first, second, *rest = path.read_text().splitlines()
    assert first.startswith(f"> **Note: not a finished report**: {says}")
    assert "the model's own text, unchecked" in first and second == ""
    assert rest == ["# Heat pumps", "", "They work."]


def test_a_complete_report_is_saved_as_written(tmp_path: Path) -> None:
    path = save_report(tmp_path, "q", "# Heat pumps", status="complete")
    assert path.read_text() == "# Heat pumps"


def test_a_new_reports_folder_and_every_report_are_the_users_only(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = save_report(tmp_path / "reports", "q", "# r\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
