"""library.worker: each file read in a child bounded in time and memory; a file that
stalls, asks for too much memory or crashes the reader is reported and the next is read."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from deep_research.library import worker
from deep_research.library.readers import Document, Section, Unreadable
from deep_research.library.worker import Reader

UNBOUNDED = [sys.executable, "-m", "tests.support.unbounded_reader"]


async def outcomes(reader: Reader, names: list[str]) -> dict[str, str]:
    said: dict[str, str] = {}
    for name in names:
        try:
            document = await reader.read(Path(name), f"text of {name}".encode())
            said[name] = document.sections[0].text
        except Unreadable as error:
            said[name] = f"unreadable: {error}"
    return said


async def test_a_file_that_stalls_hogs_memory_or_crashes_is_skipped_and_the_rest_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker, "MAX_READ_SECONDS", 15)  # room for a busy machine
    names = ["first.txt", "stall.txt", "next.txt", "hog.txt", "crash.txt", "last.txt"]
    async with Reader(UNBOUNDED) as reader:
        said = await outcomes(reader, names)
    # How the crashed child ended comes from waitpid; in a long test session on a machine of
    # 32,768 pids another waiter in this process once took that status first (asyncio then
    # reports 255). Either way the file is skipped as unreadable and the next is read.
    crashed = said.pop("crash.txt")
    assert re.fullmatch(
        r"unreadable: the reader (crashed \(signal 11\) or ran out of memory|stopped \(exit 255\))"
        r"; skipped",
        crashed,
    ), crashed
    assert said == {
        "first.txt": "text of first.txt",
        "stall.txt": "unreadable: took over 15 s to read; skipped",
        "next.txt": "text of next.txt",
        "hog.txt": "unreadable: needed over 1.5 GB of memory to read; skipped",
        "last.txt": "text of last.txt",
    }


def test_how_the_reader_died_is_told() -> None:
    assert worker._died(-11) == "the reader crashed (signal 11) or ran out of memory; skipped"
    assert worker._died(-9) == "the reader crashed (signal 9) or ran out of memory; skipped"
    assert worker._died(1) == "the reader stopped (exit 1); skipped"


async def test_the_real_reader_gives_back_what_was_read(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Über\n\nNon-ASCII text and a \u202e bidi override.\n")
    async with Reader() as reader:
        document = await reader.read(note, note.read_bytes())
        with pytest.raises(Unreadable, match="binary content"):
            await reader.read(tmp_path / "junk.txt", bytes(range(256)) * 40)
        again = await reader.read(note, note.read_bytes())  # the same child, still there
    expected = Document("note.md", "markdown", [Section(note.read_text().strip())], "")
    assert document == again == expected


def test_a_malformed_reply_is_unreadable_not_an_error() -> None:
    for reply in [{}, {"document": {"sections": "x"}}, {"document": {"title": "t"}}]:
        with pytest.raises(Unreadable, match="malformed"):
            worker._document(reply)
    with pytest.raises(Unreadable, match="^no text found$"):
        worker._document({"unreadable": "no text found"})


async def test_a_module_among_the_files_is_never_run_by_the_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`library add .` in a folder of untrusted files: a `json.py` or `pypdf.py` there is a
    file, not a module the reader's child imports from its working directory."""
    marker = tmp_path / "ran"
    for module in ("json", "pypdf", "docx", "lxml"):
        (tmp_path / f"{module}.py").write_text(f"open({str(marker)!r}, 'a').write('{module}')\n")
    monkeypatch.chdir(tmp_path)
    async with Reader() as reader:
        document = await reader.read(Path("notes.txt"), b"Heat pumps in the cold.")
    assert document.sections[0].text == "Heat pumps in the cold."
    assert not marker.exists(), marker.read_text()
