"""memory.sharing: a directory that cannot be shared is said once and opened alone."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

from deep_research.memory import LIBRARY_COLLECTION, Location
from deep_research.memory.open import open_store
from deep_research.memory.sharing import CannotShare, _alive, _last_line, attach, stop


def test_lock_files_that_cannot_be_opened_cannot_share(tmp_path: Path) -> None:
    (tmp_path / "server.lock").mkdir()  # a folder where the launch lock should be
    with pytest.raises(CannotShare, match="lock files cannot be used"):
        attach(tmp_path, 5.0)


async def test_a_directory_that_cannot_share_is_opened_alone_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    where = tmp_path / "memory"
    where.mkdir()
    (where / "server.lock").mkdir()
    location = Location(path=where, shared=True)
    with caplog.at_level(logging.WARNING, logger="deep_research.memory.open"):
        store = await open_store(location)
        await store.add(LIBRARY_COLLECTION, "k", "heat pumps in the cold", {})
        assert await open_store(location) is store
    [said] = [r.getMessage() for r in caplog.records if "not shared" in r.getMessage()]
    assert str(where) in said and "opened alone" in said


def test_stopping_where_no_keeper_runs_forgets_a_stale_record(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert not _alive(dead.pid)
    record = {"pid": dead.pid, "port": 9, "path": str(tmp_path)}
    (tmp_path / "server.json").write_text(json.dumps(record))
    assert stop(tmp_path) is None
    assert not (tmp_path / "server.json").exists()
    assert stop(tmp_path) is None


def test_a_keepers_last_words_are_one_plain_line() -> None:
    assert _last_line("banner\n\x1b[31mkeeper: it failed\x1b[0m\n\n") == "keeper: it failed"
    assert _last_line("") == ""
    assert len(_last_line("x" * 10_000)) == 300
