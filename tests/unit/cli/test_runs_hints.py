"""cli.runs.earlier_threads_hint: threads memory names, resumable here or not."""

from __future__ import annotations

from pathlib import Path

from deep_research.cli.runs import Home, earlier_threads_hint


def test_a_logged_thread_is_resumable_and_others_are_said_not_to_be(tmp_path: Path) -> None:
    home = Home(tmp_path / ".deep_research")
    (home.root / "runs").mkdir(parents=True)
    home.log_path("abc12345").write_text("")
    hints = earlier_threads_hint(home, ["abc12345", "elsewhere", "../../etc\x1b[2J"])
    assert hints[0] == (
        "  thread abc12345 ran here: deep-research replay abc12345 shows it, "
        "deep-research --resume abc12345 continues it if it stopped"
    )
    assert hints[1].startswith("  thread elsewhere, ../../etc[2J: not a run of this directory")
    assert "\x1b" not in hints[1]
    assert earlier_threads_hint(home, []) == []
