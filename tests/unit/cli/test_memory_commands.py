"""`deep-research memory list | search | forget | clear`, in process, on a real store."""

from __future__ import annotations

import asyncio
import os
import shlex
from pathlib import Path

import pytest

from deep_research.cli.counts import totals
from deep_research.cli.main import main
from deep_research.cli.summary import totals_lines
from deep_research.cli.view import Tracker
from deep_research.memory import PASSAGES_COLLECTION, REPORTS_COLLECTION, open_store
from deep_research.memory.research import CitedPage, remember
from tests.support.readme import block_after

PAGE = CitedPage("https://example.org/tides", "Tidal power", ["Tidal barrages store energy."])


def remembered(thread: str, question: str) -> None:
    async def write() -> None:
        store = await open_store()
        await remember(
            store, thread_id=thread, question=question, report="# R\n\nText.", cited=[PAGE]
        )

    asyncio.run(write())


def counts() -> list[int]:
    async def read() -> list[int]:
        store = await open_store()
        return [len(await store.items(c)) for c in (REPORTS_COLLECTION, PASSAGES_COLLECTION)]

    return asyncio.run(read())


def test_list_search_forget_clear(capsys: pytest.CaptureFixture[str]) -> None:
    remembered("tide-thread", "How does tidal power store energy?")
    remembered("bread-thread", "What hydration suits sourdough?\x1b[31m")
    assert main(["memory", "list"]) == 0
    out = capsys.readouterr().out
    assert os.environ["MEMORY_DIR"] in out and "2 reports" in out
    assert "tide-thread" in out and "bread-thread" in out and "\x1b" not in out

    assert main(["memory", "search", "tidal energy storage"]) == 0
    out = capsys.readouterr().out
    reports, passages = out.split("Passages:")
    assert reports.index("tide-thread") < reports.index("bread-thread")
    assert "https://example.org/tides" in passages

    assert main(["memory", "forget", "tide-thread"]) == 0
    assert "Forgot thread tide-thread" in capsys.readouterr().out
    assert main(["memory", "forget", "tide-thread"]) == 1
    # The bread report (question, one chunk) stays; the page both cited is stored once, by
    # URL, and went with the thread forgotten (docs/memory.md, "Look and forget").
    assert counts() == [2, 0]

    assert main(["memory", "clear"]) == 2
    assert "--yes" in capsys.readouterr().err
    assert main(["memory", "clear", "--yes"]) == 0
    assert counts() == [0, 0]


def test_a_damaged_memory_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "chroma.sqlite3").write_bytes(b"garbage" * 100)
    monkeypatch.setenv("MEMORY_DIR", str(broken))
    assert main(["memory", "list"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("deep-research: memory at ") and "cannot be read" in line


def test_usage_errors() -> None:
    assert main(["memory"]) == 2
    assert main(["memory", "search"]) == 2
    assert main(["memory", "drop", "x"]) == 2


def test_a_rerun_is_listed_once_naming_the_runs_it_replaced(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for thread in ("first-run", "second-run", "third-run"):
        remembered(thread, "How does tidal power store energy?")
    assert main(["memory", "list"]) == 0
    out = capsys.readouterr().out
    assert "1 report" in out and out.count("How does tidal power") == 1
    assert "third-run" in out and "(also researched in second-run, first-run)" in out


def test_the_run_tells_the_user_what_memory_found_and_the_summary_names_it() -> None:
    tracker = Tracker("t")
    event = {
        "event": "memory",
        "status": "on",
        "where": "/m",
        "earlier": [{"thread_id": "3f9c2a1b", "date": "2026-11-30"}],
    }
    assert (
        tracker.handle(event) == "You researched a similar question on 2026-11-30: thread 3f9c2a1b"
    )
    records = [
        {"kind": "progress", **event},
        {"kind": "progress", "event": "search_remembered", "query": "q", "urls": []},
        {"kind": "progress", "event": "memory_saved", "where": "/m", "pages": 2},
    ]
    assert "memory        at /m, 1 query answered from it, report remembered" in totals_lines(
        totals(records)
    )
    down = {"kind": "progress", "event": "memory", "status": "unavailable", "reason": "in use"}
    assert "memory        unavailable: in use" in totals_lines(totals([down]))
    assert not any(line.startswith("memory") for line in totals_lines(totals([])))
    skipped = [records[0], {"kind": "progress", "event": "memory_skipped", "status": "no_sources"}]
    assert (
        "memory        at /m, report not remembered (status no_sources: not research)"
        in totals_lines(totals(skipped))
    )


def test_the_readme_memory_commands_run_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    remembered("3f9c2a1b", "Are heat pumps worth it in Norway?")
    block = block_after("**Look and forget:**")
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 4
    for line in lines:
        argv = shlex.split(line.replace("THREAD_ID", "3f9c2a1b"))
        assert argv[0] == "deep-research"
        assert main(argv[1:]) == 0, capsys.readouterr()
    assert counts() == [0, 0]


def test_the_readme_chroma_server_command_is_the_one_the_tests_start() -> None:
    block = block_after("**A Chroma server of your own**")
    server = shlex.split(block.splitlines()[0])
    assert server[:2] == ["chroma", "run"]
    assert sorted(server[2::2]) == ["--host", "--path", "--port"]  # chroma_server's flags
    assert "CHROMA_HOST=127.0.0.1 CHROMA_PORT=8000 deep-research" in block
