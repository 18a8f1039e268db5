"""memory/location.py: where the memory is, whether a store may be there, and the one writer.

test_open.py holds the lock through a real store; here it is held without Chroma.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.errors import DeepResearchError
from deep_research.memory.location import (
    CATALOGUE,
    LOCK_NAME,
    Location,
    MemoryUnavailable,
    configured,
    configured_store,
    has_store,
    hold_directory,
)


def test_a_chroma_host_wins_over_the_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("CHROMA_PORT", "8123")
    location = configured()
    assert location == Location(host="127.0.0.1", port=8123)
    assert location.describe() == "Chroma server 127.0.0.1:8123"
    assert has_store(location) and configured_store() == location, "a server always may"


def test_a_relative_memory_dir_is_made_absolute_from_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMORY_DIR", "mem/../memory")
    location = configured()
    assert location.path == tmp_path / "memory" and location.host is None
    assert location.describe() == str(tmp_path / "memory")


def test_a_directory_has_a_store_only_once_its_catalogue_is_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMORY_DIR", str(tmp_path))
    assert configured_store() is None and not has_store(Location())
    (tmp_path / CATALOGUE).mkdir()
    assert configured_store() is None, "a directory named like the catalogue is none"
    (tmp_path / CATALOGUE).rmdir()
    (tmp_path / CATALOGUE).write_bytes(b"")
    assert configured_store() == Location(path=tmp_path)


def test_a_held_directory_refuses_a_second_holder_until_released(tmp_path: Path) -> None:
    where = tmp_path / "new" / "memory"
    lock = hold_directory(where)
    assert (where / LOCK_NAME).exists()
    with pytest.raises(MemoryUnavailable, match="in use by another process.*MEMORY_SHARE"):
        hold_directory(where)
    lock.release()
    hold_directory(where).release()


@pytest.mark.slow  # a second Python process holds the lock
def test_another_process_holding_the_lock_is_refused_with_how_to_share(tmp_path: Path) -> None:
    holder = (
        "import sys; from filelock import FileLock; "
        f"lock = FileLock({str(tmp_path / LOCK_NAME)!r}); lock.acquire(); "
        "print('held', flush=True); sys.stdin.read()"
    )
    with subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as other:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        with pytest.raises(MemoryUnavailable) as refused:
            hold_directory(tmp_path)
        assert "MEMORY_SHARE" in str(refused.value)
        other.communicate("")
    hold_directory(tmp_path).release()


def test_a_directory_that_cannot_be_made_is_memory_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(MemoryUnavailable, match="cannot be created") as error:
        hold_directory(tmp_path / "file" / "memory")
    assert isinstance(error.value, DeepResearchError) and error.value.__cause__ is None


def test_a_directory_the_disk_refuses_to_look_in_holds_no_store(tmp_path: Path) -> None:
    """A MEMORY_DIR too long to look up is nothing remembered, not a run stopped at recall:
    `remember` meets it when it opens the store, and says what is wrong."""
    assert not has_store(Location(path=tmp_path / ("x" * 300)))
