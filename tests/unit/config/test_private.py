"""Directories the agent makes for what it keeps are its user's only, and stay so."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from deep_research.config.private import folder_for_file, private_directory, private_file


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_new_directory_and_its_missing_parents_are_0700(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, which would make them 0755
    try:
        made = private_directory(tmp_path / "a" / "b" / "memory")
    finally:
        os.umask(old)
    assert [mode(p) for p in (made, made.parent, made.parent.parent)] == [0o700] * 3


def test_an_open_directory_of_the_users_is_closed_with_the_files_in_it(tmp_path: Path) -> None:
    where = tmp_path / "memory"
    where.mkdir(mode=0o755)
    where.chmod(0o755)
    catalogue = where / "chroma.sqlite3"
    catalogue.write_text("")
    catalogue.chmod(0o644)
    private_directory(where)
    assert mode(where) == 0o700 and mode(catalogue) == 0o600


def test_a_link_inside_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("")
    outside.chmod(0o644)
    where = tmp_path / "memory"
    where.mkdir()
    (where / "link").symlink_to(outside)
    private_directory(where)
    assert mode(outside) == 0o644


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's directory needs root to make")
def test_another_users_directory_is_left_alone_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    where = tmp_path / "theirs"
    where.mkdir()
    where.chmod(0o755)
    os.chown(where, 65534, 65534)
    private_directory(where)
    assert mode(where) == 0o755 and "belongs to another user" in caplog.text


def test_a_linked_memory_directory_closes_the_directory_it_names(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    real.chmod(0o755)
    (real / "chroma.sqlite3").write_text("")
    (real / "chroma.sqlite3").chmod(0o644)
    link = tmp_path / "memory"
    link.symlink_to(real)
    assert private_directory(link) == link
    assert mode(real) == 0o700 and mode(real / "chroma.sqlite3") == 0o600


def test_a_folder_for_a_file_is_made_private_only_when_the_agent_makes_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = os.umask(0o022)
    try:
        made = folder_for_file(tmp_path / "new" / "deep" / "runs.sqlite")
    finally:
        os.umask(old)
    assert [mode(made), mode(made.parent)] == [0o700, 0o700]
    theirs = tmp_path / "home"
    theirs.mkdir()
    theirs.chmod(0o750)
    (theirs / "letter.txt").write_text("")
    (theirs / "letter.txt").chmod(0o644)
    assert folder_for_file(theirs / "x.sqlite") == theirs
    assert mode(theirs) == 0o750 and mode(theirs / "letter.txt") == 0o644
    assert "open to other users" in caplog.text


def test_a_private_file_is_made_0600_and_an_existing_one_left(tmp_path: Path) -> None:
    made = private_file(tmp_path / "runs.sqlite")
    assert mode(made) == 0o600
    kept = tmp_path / "kept.sqlite"
    kept.write_text("data")
    kept.chmod(0o640)
    assert mode(private_file(kept)) == 0o640 and kept.read_text() == "data"
