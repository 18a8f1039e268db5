"""memory.listing: a local store is listed from its catalogue, anything else through
chromadb, with the same records; reports come out one row per thread, newest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.memory import (
    LIBRARY_COLLECTION,
    Location,
    MemoryUnavailable,
    Piece,
    catalogue,
    open_store,
)
from deep_research.memory.listing import (
    list_chunks,
    nothing_remembered,
    remembered_reports,
    report_threads,
)
from deep_research.memory.research import remember


def test_report_threads_one_row_per_thread_and_question_newest_first() -> None:
    records: list[dict[str, str | int | float | bool]] = [
        {"thread": "old", "question": "Q1", "date": "2026-01-01", "ts": 1.0, "threads": "[]"},
        {"thread": "new", "question": "Q2", "date": "2026-02-01", "ts": 2.0, "threads": "[]"},
        {"thread": "new", "question": "Q2", "date": "2026-02-01", "ts": 2.0, "threads": "[]"},
        {"thread": "odd", "question": "Q3", "date": "", "ts": "not a time", "threads": "[]"},
        # A rerun's entry names the threads whose copies it replaced; a list in another
        # shape (another client, a damaged store) is ignored, never fatal.
        {"thread": "r3", "question": "Q4", "ts": 3.0, "threads": '["r3", "r2", 7, "r1"]'},
        {"thread": "x", "question": "Q5", "ts": 0.5, "threads": "{not json"},
    ]
    assert report_threads(records) == [
        ("r3", "", "Q4", ("r2", "r1")),
        ("new", "2026-02-01", "Q2", ()),
        ("old", "2026-01-01", "Q1", ()),
        ("x", "", "Q5", ()),
        ("odd", "", "Q3", ()),
    ]


def test_an_entry_stored_before_the_threads_list_is_refused_with_the_version() -> None:
    old = {"thread": "t0", "question": "Q", "ts": 1.0}
    with pytest.raises(
        MemoryUnavailable, match=r"thread 't0' was written before deep_research 0\.1\.0"
    ):
        report_threads([old])


async def test_a_directory_with_no_store_lists_nothing_and_makes_nothing(tmp_path: Path) -> None:
    listed = await list_chunks(LIBRARY_COLLECTION, location=Location(path=tmp_path / "m"))
    assert (listed.records, listed.read_by) == ([], "catalogue")
    assert not (tmp_path / "m").exists()


@pytest.mark.slow  # real Chroma and MiniLM
async def test_the_catalogue_and_chromadb_list_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = Location(path=tmp_path / "memory")
    store = await open_store(where)
    await store.put(LIBRARY_COLLECTION, "a", [Piece("x", {"title": "A"}), Piece("y", {})])
    for thread, question in (("t1", "Heat pumps?"), ("t2", "Tides?")):
        await remember(store, thread_id=thread, question=question, report="A report.", cited=[])
    fast = await list_chunks(LIBRARY_COLLECTION, location=where)
    where_fast, reports_fast = await remembered_reports(where)
    monkeypatch.setattr(catalogue, "KNOWN_SCHEMA", {"sysdb": -1})  # a chromadb it doesn't know
    slow = await list_chunks(LIBRARY_COLLECTION, location=where)
    where_slow, reports_slow = await remembered_reports(where)
    assert (fast.read_by, slow.read_by) == ("catalogue", "chromadb")
    key = lambda r: (str(r["key"]), str(r["chunk"]))  # noqa: E731
    assert sorted(fast.records, key=key) == sorted(slow.records, key=key)
    assert len(fast.records) == 2
    assert where_fast == where_slow == str(tmp_path / "memory")
    assert sorted(reports_fast) == sorted(reports_slow)
    assert {report.thread for report in reports_fast} == {"t1", "t2"}


@pytest.mark.slow  # real Chroma and MiniLM
async def test_a_store_opened_by_a_run_that_remembered_nothing_is_still_nothing_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first run opens its store early; when it fails before `remember`, the next run's
    `recall` must not open that empty store before its first model call."""
    where = Location(path=tmp_path / "memory")
    assert nothing_remembered(where), "no directory at all"
    store = await open_store(where)
    await store.put(LIBRARY_COLLECTION, "a", [Piece("a document", {"title": "A"})])
    assert (tmp_path / "memory" / "chroma.sqlite3").is_file()
    assert nothing_remembered(where), "a catalogue, a library, no report"
    await remember(store, thread_id="t1", question="Heat pumps?", report="A report.", cited=[])
    assert not nothing_remembered(where)
    monkeypatch.setattr(catalogue, "KNOWN_SCHEMA", {"sysdb": -1})  # a chromadb it doesn't know
    assert not nothing_remembered(where), "unsure: the store is opened and asked"
    assert not nothing_remembered(Location(host="127.0.0.1", port=9)), "a server is asked"
