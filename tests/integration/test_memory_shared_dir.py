"""One memory directory, several processes of one user: the server the first one starts
(a real Chroma, real MiniLM) is the one every other finds, and it ends when unused."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.memory import (
    LIBRARY_COLLECTION,
    Location,
    MemoryUnavailable,
    open_store,
    sharing,
)
from deep_research.memory import keeper as keeper_module
from deep_research.memory.record import KEEPER_MODULE, ServerRecord, is_keeper, read_record
from tests.support.cli import cli_command
from tests.support.memory_writer import note

pytestmark = pytest.mark.slow  # starts processes and Chroma servers

REPO = Path(__file__).resolve().parents[2]
BROKEN_CHROMA = REPO / "tests" / "support" / "broken_chroma"
GONE_SECONDS = 60.0  # a keeper stops within its idle time, plus Chroma's shutdown


def shared_env(directory: Path, idle: str = "600", pythonpath: str = str(REPO)) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": pythonpath,
        "MEMORY_DIR": str(directory),
        "MEMORY_SHARE": "true",
        "MEMORY_SERVER_IDLE": idle,
    }


def writer(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.memory_writer", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def keepers_of(directory: Path) -> list[int]:
    """The live keepers serving `directory`, found from every process's command line."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if KEEPER_MODULE.encode() in args and str(directory).encode() in args:
            found.append(int(proc.name))
    return found


@pytest.fixture
def directory(tmp_path: Path) -> Iterator[Path]:
    """The memory directory; every keeper it still has when the test ends is stopped."""
    where = tmp_path / "memory"
    try:
        yield where
    finally:
        for pid in keepers_of(where):
            os.kill(pid, signal.SIGCONT)  # a test that failed with it stopped
            sharing._terminate(pid)


def wait_until_gone(pid: int) -> None:
    deadline = time.monotonic() + GONE_SECONDS
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # waiting for a process to end, not timing it
    assert not Path(f"/proc/{pid}").exists(), f"keeper {pid} still runs"


def stop(directory: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command("memory", "stop"),
        cwd=directory.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_two_processes_opening_at_once_start_one_server_and_both_writes_land(
    directory: Path,
) -> None:
    env = shared_env(directory)
    both = [writer(["write", name, "20"], env) for name in ("one", "two")]
    try:
        for proc in both:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr
        record = read_record(directory)
        assert record is not None and is_keeper(record, directory)
        assert keepers_of(directory) == [record.pid]
        for proc in both:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in both:
            out, err = proc.communicate(timeout=120)
            assert out.strip() == "done" and proc.returncode == 0, err
            assert "not shared" not in err, err
    finally:
        for proc in both:
            proc.kill()
    stopped = stop(directory, env)
    assert stopped.returncode == 0, stopped.stderr
    assert f"Stopped the memory server for {directory} (pid {record.pid}" in stopped.stdout
    wait_until_gone(record.pid)
    assert read_record(directory) is None and not (directory / "server.json").exists()
    again = stop(directory, env)
    assert again.returncode == 0 and f"No memory server runs for {directory}." in again.stdout
    # Every note of both processes is in the directory, read by an embedded client.
    store = await open_store(Location(path=directory))
    keys = {hit.key for hit in await store.items(LIBRARY_COLLECTION, texts=False)}
    assert keys == {f"{name}{i}" for name in ("one", "two") for i in range(20)}
    (best,) = await store.query(LIBRARY_COLLECTION, note("two", 7), k=1)
    assert best.key == "two7"


def test_the_server_outlives_its_starter_and_stops_when_nobody_uses_it(directory: Path) -> None:
    # Idle long enough for the next process to start and attach on a loaded machine.
    env = shared_env(directory, idle="15")
    first = writer(["write", "first", "2"], env)
    out, err = first.communicate("go\n", timeout=120)
    assert out.split() == ["ready", "done"], err
    record = read_record(directory)
    assert record is not None and is_keeper(record, directory)  # its starter has ended
    later = writer(["write", "later", "2"], env)
    out, err = later.communicate("go\n", timeout=120)
    assert out.split() == ["ready", "done"], err
    assert read_record(directory) == record and keepers_of(directory) == [record.pid]
    wait_until_gone(record.pid)  # no user left: it stops by itself
    assert read_record(directory) is None


def test_a_chroma_that_cannot_serve_leaves_the_process_its_memory_alone(
    tmp_path: Path, directory: Path
) -> None:
    env = shared_env(directory, pythonpath=f"{BROKEN_CHROMA}{os.pathsep}{REPO}")
    proc = writer(["write", "alone", "3"], env)
    out, err = proc.communicate("go\n", timeout=180)
    assert out.split() == ["ready", "done"] and proc.returncode == 0, err
    # Said once, with the reason, and the writes are in the directory all the same.
    assert err.count("is not shared") == 1, err
    assert "Chroma's server cannot run on this install" in err
    assert read_record(directory) is None and keepers_of(directory) == []
    listed = subprocess.run(
        cli_command("library", "list"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert all(f"alone{i}" in listed.stdout for i in range(3)), listed.stdout


def started_user(directory: Path) -> tuple[subprocess.Popen[str], ServerRecord]:
    """A process attached to a keeper it started, holding its lease, its writes pending."""
    user = writer(["write", "user", "5"], shared_env(directory))
    assert user.stdout is not None
    assert user.stdout.readline().strip() == "ready", user.stderr
    record = read_record(directory)
    assert record is not None and is_keeper(record, directory)
    return user, record


def writes_land(user: subprocess.Popen[str], record: ServerRecord, directory: Path) -> None:
    out, err = user.communicate("go\n", timeout=120)
    assert out.split() == ["done"] and user.returncode == 0, err
    assert read_record(directory) == record and keepers_of(directory) == [record.pid]


def test_a_keeper_in_use_that_answers_late_is_used_not_stopped(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, record = started_user(directory)
    try:
        real = keeper_module.heartbeat
        missed: list[bool] = []

        def late(port: int, seconds: float = 2.0) -> bool:
            answered = real(port, seconds)
            if not missed:  # the first, while the keeper is stopped: it misses it
                missed.append(answered)
                os.kill(record.pid, signal.SIGCONT)  # stalled, as on a loaded machine
            return answered

        monkeypatch.setattr(keeper_module, "heartbeat", late)
        os.kill(record.pid, signal.SIGSTOP)
        attached = sharing.attach(directory, 600)
        os.close(attached.lease)
        assert missed == [False]
        assert attached.record == record
        writes_land(user, record, directory)
    finally:
        user.kill()


def test_a_keeper_in_use_that_does_not_answer_is_said_busy_and_left_running(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, record = started_user(directory)
    try:
        monkeypatch.setattr(sharing, "BUSY_SECONDS", 1.0)
        os.kill(record.pid, signal.SIGSTOP)
        try:
            with pytest.raises(MemoryUnavailable, match="is busy: other processes use it"):
                sharing.attach(directory, 600)
        finally:
            os.kill(record.pid, signal.SIGCONT)
        writes_land(user, record, directory)  # it was sent no signal: it still serves
    finally:
        user.kill()


def test_a_stalled_keeper_nobody_uses_stops_with_the_launch_lock_free(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = writer(["write", "gone", "1"], shared_env(directory))
    out, err = first.communicate("go\n", timeout=120)
    assert out.split() == ["ready", "done"], err
    old = read_record(directory)
    assert old is not None and is_keeper(old, directory)  # in use by no process now
    real_heartbeat, real_alive = keeper_module.heartbeat, sharing._alive
    real_launch_lock = keeper_module.launch_lock
    missed: list[bool] = []
    holding = [False]  # whether this process, attaching, holds the launch lock
    held: list[bool] = []  # `holding` at each check of whether the old keeper still runs

    def late(port: int, seconds: float = 2.0) -> bool:
        answered = real_heartbeat(port, seconds)
        if port == old.port and not missed:
            missed.append(answered)
            os.kill(old.pid, signal.SIGCONT)
        return answered

    # Watched where it is taken, not probed: the old keeper holds the same lock while it
    # stops, as it should, and a probe could not tell its hold from ours.
    @contextlib.contextmanager
    def launch_lock(where: Path, seconds: float) -> Iterator[bool]:
        with real_launch_lock(where, seconds) as taken:
            holding[0] = taken
            try:
                yield taken
            finally:
                holding[0] = False

    def alive(pid: int) -> bool:
        if pid == old.pid:
            held.append(holding[0])
        return real_alive(pid)

    monkeypatch.setattr(keeper_module, "heartbeat", late)
    monkeypatch.setattr(keeper_module, "launch_lock", launch_lock)
    monkeypatch.setattr(sharing, "_alive", alive)
    os.kill(old.pid, signal.SIGSTOP)
    attached = sharing.attach(directory, 600)
    os.close(attached.lease)
    assert missed == [False] and not real_alive(old.pid)
    assert held and not any(held), held  # waited for, without the lock it takes to stop
    assert attached.record.pid != old.pid and keepers_of(directory) == [attached.record.pid]
