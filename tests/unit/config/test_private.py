"""Directories the agent makes for what it keeps are its user's only, and stay so."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from deep_research.config.private import private_directory


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
