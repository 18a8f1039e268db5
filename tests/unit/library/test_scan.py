"""library/scan.py: candidates named once, in order, cut at the limit; loads hashed and guarded.

Which statuses the walk gives (oversized, unsupported, FIFOs, symlinks out of the folder)
and a file swapped for a symlink are in test_readers_hostile.py.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from deep_research.library import scan


def names(paths: list[Path]) -> list[tuple[str, str]]:
    return [(c.path.name, c.status) for c in scan.candidates(paths)]


def test_files_are_walked_in_sorted_order_and_each_is_named_once(tmp_path: Path) -> None:
    for name in ["b.md", "a.txt", "sub/c.md", "sub/a.md", "a/z.md"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(name)
    found = [c.path for c in scan.candidates([tmp_path / "b.md", tmp_path, tmp_path / "sub"])]
    order = [
        "b.md",
        "a.txt",
        "a/z.md",
        "sub/a.md",
        "sub/c.md",
    ]  # a folder's files, then its folders
    assert found == [tmp_path / p for p in order]
    assert all(path.is_absolute() for path in found)


def test_a_relative_path_and_a_dotted_one_are_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("a")
    monkeypatch.chdir(tmp_path / "sub")
    assert names([Path("../a.md"), Path("../sub/../a.md"), tmp_path / "a.md"]) == [("a.md", "")]


def test_more_files_than_the_limit_are_cut_with_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "MAX_FILES", 3)
    for i in range(6):
        (tmp_path / f"{i}.txt").write_text("x")
    found = list(scan.candidates([tmp_path]))
    assert [c.status for c in found] == ["", "", "", "skipped"]
    assert found[-1].path == tmp_path and "more than 3 files" in found[-1].problem


def test_a_symlink_loop_and_a_missing_path_are_unreadable_not_errors(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert names([tmp_path / "loop", tmp_path / "gone"]) == [
        ("loop", "unreadable"),
        ("gone", "unreadable"),
    ]


def test_hostile_file_names_are_classified_like_any_other(tmp_path: Path) -> None:
    hostile = ["new\nline.md", "\x1b[2Jclear.txt", "[bold]x[\\bold].md", "<<<data 0>>>.txt"]
    for name in hostile:
        (tmp_path / name).write_text("x")
    assert sorted(names([tmp_path])) == sorted((name, "") for name in hostile)


def load_fifo(path: Path) -> scan.Loaded:
    """`scan.load` of a FIFO; an open that blocks fails the test instead of hanging it."""
    os.mkfifo(path)
    outcome: list[scan.Loaded | BaseException] = []

    def load() -> None:
        try:
            outcome.append(scan.load(path))
        except BaseException as error:  # handed to the test's thread
            outcome.append(error)

    reader = threading.Thread(target=load)
    reader.start()
    reader.join(timeout=5)
    if reader.is_alive():
        with open(path, "wb"):  # a writer lets the blocked open go on
            reader.join()
        pytest.fail("opening a FIFO blocked: it must be opened without blocking")
    (result,) = outcome
    if isinstance(result, BaseException):
        raise result
    return result


def test_a_load_is_the_files_bytes_and_their_sha256(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    raw = os.urandom(4_096) + b"\x00\xff"
    path.write_bytes(raw)
    loaded = scan.load(path)
    assert loaded.raw == raw and loaded.path == path
    assert loaded.sha256 == hashlib.sha256(raw).hexdigest()


def test_a_file_that_grew_past_the_limit_or_is_not_regular_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "MAX_FILE_BYTES", 10)
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * 10)
    assert len(scan.load(path).raw) == 10
    path.write_bytes(b"x" * 11)
    with pytest.raises(ValueError, match="oversized"):
        scan.load(path)
    with pytest.raises(ValueError, match="not a regular file"):
        load_fifo(tmp_path / "pipe.txt")
    with pytest.raises(OSError):
        scan.load(tmp_path)


def test_a_name_that_is_not_utf8_is_skipped_with_why(tmp_path: Path) -> None:
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.md"), "w") as handle:
        handle.write("# Caf\n")
    (tmp_path / "fine.md").write_text("# Fine\n")
    [odd, fine] = list(scan.candidates([tmp_path]))
    assert (odd.status, fine.status) == ("skipped", "") and "not UTF-8" in odd.problem
    assert scan.is_text("café.md") and not scan.is_text(os.fsdecode(b"caf\xe9.md"))


def test_a_symlink_to_a_folder_outside_is_named_and_one_inside_is_not(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "real").mkdir(parents=True)
    outside.mkdir()
    (root / "real" / "a.md").write_text("a")
    (outside / "b.md").write_text("b")
    (root / "away").symlink_to(outside, target_is_directory=True)
    (root / "again").symlink_to(root / "real", target_is_directory=True)
    found = [(c.path.name, c.status, c.problem) for c in scan.candidates([root])]
    assert found == [
        ("away", "skipped", "symlink to a folder outside the folder"),
        ("a.md", "", ""),
    ]
