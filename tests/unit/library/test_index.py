"""library.index: documents added, recognised unchanged, replaced, listed and removed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deep_research.library.index import AddReport, FileOutcome, add_paths, entries, remove_path
from deep_research.memory.location import Location
from deep_research.memory.open import open_store
from deep_research.memory.store import Store
from tests.support.documents import write_pdf

# chromadb's import and MiniLM's load take seconds on a first use.
pytestmark = pytest.mark.slow


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await open_store(Location(path=tmp_path / "memory"))


async def _add(store: Store, *paths: Path) -> tuple[AddReport, list[FileOutcome]]:
    seen: list[FileOutcome] = []
    report = await add_paths(store, list(paths), seen.append)
    return report, seen


async def test_a_folder_is_added_each_file_reported_as_it_goes(
    store: Store, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.md").write_text("# Heat pumps\n\nThey move heat.\n")
    (docs / "sub" / "page.html").write_text("<html><title>T</title><p>Solar panels.</p></html>")
    (docs / "image.png").write_bytes(b"\x89PNG")
    write_pdf(docs / "report.pdf", ["Page one on tides.", "Page two on wind."])
    report, seen = await _add(store, docs)
    assert seen == report.outcomes
    status = {o.path.name: o.status for o in report.outcomes}
    assert status == {
        "notes.md": "added",
        "page.html": "added",
        "image.png": "unsupported",
        "report.pdf": "added",
    }
    assert report.count("added") == 3 and report.count("added", "unsupported") == 4
    listed = {Path(e.path).name: e for e in await entries(store)}
    assert set(listed) == {"notes.md", "page.html", "report.pdf"}
    assert listed["report.pdf"].pages == 2 and listed["report.pdf"].kind == "pdf"
    assert listed["notes.md"].pages == 0 and listed["notes.md"].chunks >= 1
    assert all(e.added for e in listed.values())
    assert all(Path(e.path).is_absolute() for e in listed.values())


async def test_an_unchanged_file_is_recognised_and_a_changed_one_replaced(
    store: Store, tmp_path: Path
) -> None:
    note = tmp_path / "note.txt"
    note.write_text(" ".join(f"Sentence {i} about tidal power." for i in range(300)))
    [first] = (await _add(store, note))[0].outcomes
    [again] = (await _add(store, note))[0].outcomes
    assert (first.status, again.status) == ("added", "unchanged") and first.chunks > 1
    note.write_text("Now short.")
    [changed] = (await _add(store, note))[0].outcomes
    assert (changed.status, changed.chunks) == ("updated", 1)
    [entry] = await entries(store)
    assert entry.chunks == 1


async def test_what_cannot_be_read_is_reported_not_raised(store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret notes")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "link.md").symlink_to(outside)
    os.mkfifo(docs / "pipe.md")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 not really \x00\x1b")
    report, _ = await _add(store, docs, tmp_path / "missing.md")
    status = {o.path.name: (o.status, o.note) for o in report.outcomes}
    assert status["link.md"] == ("skipped", "symlink leads outside the folder")
    assert status["pipe.md"][0] == "skipped"
    assert status["bad.pdf"][0] == "unreadable"
    assert status["missing.md"] == ("unreadable", "not found")
    assert await entries(store) == []


async def test_removing_a_file_or_a_folder_even_gone_from_disk(
    store: Store, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    (docs / "a").mkdir(parents=True)
    for name in ("a/one.md", "a/two.md", "three.md"):
        (docs / name).write_text(f"text of {name}")
    (docs / "a-other.md").write_text("a sibling whose name starts like the folder")
    await _add(store, docs)
    assert await remove_path(store, docs / "three.md") == [str((docs / "three.md").resolve())]
    (docs / "a" / "one.md").unlink()
    (docs / "a" / "two.md").unlink()
    (docs / "a").rmdir()
    gone = await remove_path(store, docs / "a")
    assert [Path(p).name for p in gone] == ["one.md", "two.md"]
    assert [Path(e.path).name for e in await entries(store)] == ["a-other.md"]
    assert await remove_path(store, tmp_path / "never-added") == []
