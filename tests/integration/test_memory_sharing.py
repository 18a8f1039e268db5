"""One memory, several processes: a locked directory, and a real Chroma server shared."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.memory import LIBRARY_COLLECTION, Location, MemoryUnavailable, open_store
from tests.support.chroma_server import chroma_server
from tests.support.memory_writer import note

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

REPO = Path(__file__).resolve().parents[2]


def writer(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.memory_writer", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.fixture
def server_port(tmp_path: Path) -> Iterator[int]:
    with chroma_server(tmp_path / "chroma-data", tmp_path / "chroma.log") as port:
        yield port


async def test_a_second_process_on_one_directory_is_refused_and_told_to_share(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "memory"
    holder = writer(["hold"], {"MEMORY_DIR": str(directory)})
    try:
        with pytest.raises(MemoryUnavailable, match="in use by another process.*MEMORY_SHARE"):
            await open_store(Location(path=directory))
    finally:
        holder.communicate("")
    assert holder.returncode == 0


async def test_a_killed_holder_leaves_no_lock_behind(tmp_path: Path) -> None:
    """kill -9 runs no cleanup: the lock must be one the system drops with the process
    (flock), not a file whose presence means "taken", or the user is locked out for good."""
    directory = tmp_path / "memory"
    holder = writer(["hold"], {"MEMORY_DIR": str(directory)})
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert holder.returncode == -signal.SIGKILL
    assert (directory / "lock").exists()  # left behind, and harmless
    store = await open_store(Location(path=directory))
    assert await store.items(LIBRARY_COLLECTION) == []


async def test_two_processes_writing_to_one_server_lose_nothing(server_port: int) -> None:
    env = {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(server_port)}
    other = writer(["write", "other", "25"], env)
    store = await open_store(Location(host="127.0.0.1", port=server_port))
    assert other.stdin is not None
    other.stdin.write("go\n")
    other.stdin.flush()
    mine = asyncio.gather(
        *(store.add(LIBRARY_COLLECTION, f"mine{i}", note("mine", i), {}) for i in range(25))
    )
    await mine
    out, _ = await asyncio.to_thread(other.communicate)
    assert out.strip() == "done" and other.returncode == 0
    for prefix in ("mine", "other"):
        for i in range(25):
            (best,) = await store.query(LIBRARY_COLLECTION, note(prefix, i), k=1)
            assert best.key == f"{prefix}{i}"


TOKEN = "a-token-of-the-servers-" + "7" * 24  # what `openssl rand -hex 32` would stand for


@pytest.fixture
def token_port(tmp_path: Path) -> Iterator[int]:
    """Chroma started as docs/distributed.md starts it: asking every client for TOKEN."""
    with chroma_server(tmp_path / "chroma-data", tmp_path / "chroma.log", TOKEN) as port:
        yield port


async def test_a_server_asking_for_a_token_takes_the_writes_of_one_that_has_it(
    token_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHROMA_TOKEN", TOKEN)
    store = await open_store(Location(host="127.0.0.1", port=token_port))
    await store.add(LIBRARY_COLLECTION, "kept", note("token", 1), {})
    (best,) = await store.query(LIBRARY_COLLECTION, note("token", 1), k=1)
    assert best.key == "kept"


@pytest.mark.parametrize("token", [None, "not-the-servers-token-" + "9" * 24])
async def test_a_missing_or_wrong_token_is_refused_and_said_without_it(
    token: str | None, token_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if token is not None:
        monkeypatch.setenv("CHROMA_TOKEN", token)
    with pytest.raises(MemoryUnavailable, match="refused the token.*CHROMA_TOKEN") as refused:
        await open_store(Location(host="127.0.0.1", port=token_port))
    assert TOKEN not in str(refused.value)
    assert token is None or token not in str(refused.value)
