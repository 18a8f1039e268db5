"""memory.open: one store per location per process, a held directory, clear refusals."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from deep_research.memory.location import CATALOGUE, Location, MemoryUnavailable, hold_directory
from deep_research.memory.open import open_store, open_store_blocking
from tests.support.fakes.stalling_server import StallingServer

# chromadb takes seconds to import and to open a first store.
pytestmark = pytest.mark.slow


async def test_one_location_is_one_store_for_the_process(tmp_path: Path) -> None:
    where = Location(path=tmp_path / "memory")
    store = await open_store(where)
    assert open_store_blocking(where) is store and await open_store(where) is store
    assert store.location == where and store.where == str(where.path)
    assert (where.path / CATALOGUE).is_file()  # type: ignore[operator]
    other = await open_store(Location(path=tmp_path / "other"))
    assert other is not store


async def test_the_default_is_the_environments_memory_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_DIR", str(tmp_path / "env-memory"))
    store = await open_store()
    assert store.location == Location(path=tmp_path / "env-memory")


async def test_the_directory_is_held_while_the_store_is_open(tmp_path: Path) -> None:
    where = Location(path=tmp_path / "held")
    await open_store(where)
    with pytest.raises(MemoryUnavailable, match="in use by another process.*MEMORY_SHARE"):
        hold_directory(tmp_path / "held")


async def test_a_damaged_store_repeats_its_first_error_and_lets_the_directory_go(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / CATALOGUE).write_bytes(b"\x00not sqlite\x1b[2J" * 500)
    with pytest.raises(MemoryUnavailable) as first:
        await open_store(Location(path=broken))
    with pytest.raises(MemoryUnavailable) as again:
        open_store_blocking(Location(path=broken))
    assert again.value is first.value and "move the directory away" in str(first.value)
    hold_directory(broken).release()  # the failed open took its lock back


def test_an_unreachable_chroma_server_is_named(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    with pytest.raises(
        MemoryUnavailable, match=f"Chroma server 127.0.0.1:{port} cannot be reached"
    ):
        open_store_blocking(Location(host="127.0.0.1", port=port))


def test_an_unanswering_server_is_tried_once_per_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    from deep_research.memory import open as opening
    from deep_research.memory import server

    monkeypatch.setattr(server, "OPEN_SECONDS", 1.0)
    monkeypatch.setattr(opening, "_unreachable", type(opening._unreachable)())
    with StallingServer("silent") as silent:
        where = Location(host="127.0.0.1", port=silent.port)
        with pytest.raises(MemoryUnavailable, match="did not answer within 1 s") as first:
            open_store_blocking(where)
        with pytest.raises(MemoryUnavailable) as again:
            open_store_blocking(where)
        assert again.value is first.value and silent.connections == 1
        monkeypatch.setattr(opening, "_thread", lambda: "another-thread")
        with pytest.raises(MemoryUnavailable):
            open_store_blocking(where)
        assert silent.connections == 2  # another thread's run tries for itself
        monkeypatch.setattr(opening, "UNREACHABLE_SECONDS", 0.0)
        with pytest.raises(MemoryUnavailable):
            open_store_blocking(where)
        assert silent.connections == 3  # and one remembered too long ago is tried again
        monkeypatch.setattr(opening, "UNREACHABLE_SECONDS", 3600.0)
        with pytest.raises(MemoryUnavailable):
            open_store_blocking(where)
        assert silent.connections == 3  # remembered again
        opening.close_stores()
        with pytest.raises(MemoryUnavailable):
            open_store_blocking(where)
        assert silent.connections == 4  # forgotten by the close


@pytest.mark.parametrize("host", ["h:99999", "http://h:notaport", "h\nost", "h" * 2_000])
def test_a_chroma_host_no_url_can_hold_is_said_and_the_run_goes_on(host: str) -> None:
    # A typo in CHROMA_HOST made httpx raise InvalidURL, which is neither a ValueError nor an
    # HTTP error: the run failed instead of going on without memory.
    with pytest.raises(MemoryUnavailable, match="cannot be reached"):
        open_store_blocking(Location(host=host, port=8000))
