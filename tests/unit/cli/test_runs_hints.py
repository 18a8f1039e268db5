"""cli.runs.earlier_thread_hint: what the user can do with the thread memory names first."""

from __future__ import annotations

from pathlib import Path

from deep_research.cli.runs import Home, earlier_thread_hint


def test_a_logged_thread_is_replayed_and_resumed_and_another_is_shown_from_memory(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path / ".deep_research")
    (home.root / "runs").mkdir(parents=True)
    home.log_path("abc12345").write_text("")
    assert earlier_thread_hint(home, "abc12345") == (
        "  deep-research replay abc12345 shows it, "
        "deep-research --resume abc12345 continues it if it stopped"
    )
    for elsewhere in ("fedcba98", "../../etc\x1b[2J"):
        hint = earlier_thread_hint(home, elsewhere)
        assert hint.startswith("  it ran in another folder: deep-research memory search")
        assert elsewhere not in hint
