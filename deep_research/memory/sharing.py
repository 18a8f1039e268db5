"""One memory directory shared by every process of its user, through one Chroma server.

`attach(directory, idle)` finds the directory's keeper (`server.json`, believed only once
`record.is_keeper` and a bounded heartbeat agree), or starts one under the launch lock, so
two processes opening the memory at once start one server; then it holds a shared lock on
`server.users` for the process's life, which tells the keeper the server is in use.
`stop(directory)` stops the keeper. `CannotShare` says why a directory cannot be shared
(the caller then opens it embedded, alone); `MemoryUnavailable` that it cannot be used.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from deep_research.config.private import private_directory
from deep_research.errors import DeepResearchError
from deep_research.memory.location import LOCK_NAME, MemoryUnavailable
from deep_research.memory.record import (
    HOST,
    RECORD_NAME,
    ServerRecord,
    is_keeper,
    keeper_command,
    listens,
    read_record,
    remove_record,
)
from deep_research.text.controls import without_controls

START_SECONDS = 90.0  # the keeper's own start-up wait, and then some
LAUNCH_SECONDS = START_SECONDS + 30.0  # waiting for another process that starts one
STOP_SECONDS = 30.0  # the keeper's wait for the launch lock (10 s), Chroma's shutdown (10 s)
BUSY_SECONDS = 15.0  # a keeper others use that missed its heartbeat: its second chance
RETIRE_ROUNDS = 3  # keepers told to stop before one is found or started
LEASE_SECONDS = 5.0
LOG_TAIL = 2000  # bytes of the keeper's log read for why it did not start
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # Chroma colours its log


class CannotShare(DeepResearchError):
    """No server could be found or started for the directory; the message says why."""


@dataclass(frozen=True)
class Attached:
    """A keeper this process uses, and the lease that says so (open for the process's life)."""

    record: ServerRecord
    lease: int


def attach(directory: Path, idle: float) -> Attached:
    """The directory's running server (started if there is none), leased to this process."""
    try:
        from deep_research.memory import keeper  # fcntl: POSIX only
    except ImportError:
        raise CannotShare("sharing needs POSIX file locks (fcntl)") from None
    try:
        private_directory(directory)  # the store, its token and its record: the user's only
    except OSError as error:
        raise MemoryUnavailable(
            f"memory directory {directory} cannot be created: {error}"
        ) from None
    try:
        for _ in range(RETIRE_ROUNDS):
            with keeper.launch_lock(directory, LAUNCH_SECONDS) as taken:
                if not taken:
                    raise CannotShare(
                        f"another process held {directory / keeper.LAUNCH_NAME} too long"
                    )
                found = _found(directory, idle)
                if isinstance(found, ServerRecord):
                    return Attached(found, _lease(directory))
            # Outside the launch lock: a keeper that was told to stop takes it to stop.
            _wait_for_end(found)
        raise CannotShare(f"the keeper of {directory} did not stop when told to")
    except OSError as error:  # a lock file that cannot be opened (a folder in its place)
        raise CannotShare(f"its lock files cannot be used: {error}") from None


def _found(directory: Path, idle: float) -> ServerRecord | int:
    """Under the launch lock: the keeper to use (started if there is none), or the pid of
    one that was told to stop, to wait for without the lock before looking again."""
    from deep_research.memory.keeper import heartbeat

    record = read_record(directory)
    if record is None and not (directory / RECORD_NAME).exists():
        return _start(directory, idle)
    if record is not None and serving(record, directory):
        return record
    if record is not None and _busy(record, directory):
        # Slow, not gone: other processes use it, and stopping it would lose their writes.
        if heartbeat(record.port, BUSY_SECONDS):
            return record
        raise MemoryUnavailable(
            f"memory server for {directory} ({record.describe()}) is busy: other processes "
            f"use it and it did not answer within {BUSY_SECONDS:.0f} s; try again"
        )
    told = retire(directory, record)
    return _start(directory, idle) if told is None else told


def serving(record: ServerRecord, directory: Path) -> bool:
    """Whether `record` is a live keeper of `directory` whose Chroma answers on its port."""
    from deep_research.memory.keeper import heartbeat

    if not is_keeper(record, directory):
        return False
    if listens(record.pid, record.port) is False:  # another process holds the port
        return False
    return heartbeat(record.port)


def _busy(record: ServerRecord, directory: Path) -> bool:
    """Whether `record` is a keeper of `directory` on its port that other processes lease."""
    import fcntl

    from deep_research.memory.keeper import USERS_NAME, open_lock, try_flock

    if not is_keeper(record, directory) or listens(record.pid, record.port) is False:
        return False
    fd = open_lock(directory / USERS_NAME)
    try:
        return not try_flock(fd, fcntl.LOCK_EX)  # a probe, as the keeper's own
    finally:
        os.close(fd)  # releases it


def retire(directory: Path, record: ServerRecord | None) -> int | None:
    """Take a record that is no longer believed out of the way: a keeper of ours that
    stopped answering, and that nobody uses, is told to stop (its pid is returned, to be
    waited for without the launch lock, which it takes to stop); a dead, foreign or forged
    record is only forgotten (None)."""
    if record is not None and is_keeper(record, directory):
        _signal(record.pid)
        return record.pid
    try:
        remove_record(directory)
    except OSError as error:
        raise CannotShare(f"a stale {directory / RECORD_NAME} cannot be removed: {error}") from None
    return None


def stop(directory: Path) -> ServerRecord | None:
    """Stop the directory's keeper; the record it had, or None when none was running."""
    record = read_record(directory)
    if record is None or not is_keeper(record, directory):
        remove_record(directory)  # a stale or forged record, if any
        return None
    _terminate(record.pid)
    return record


def _terminate(pid: int) -> None:
    _signal(pid)
    _wait_for_end(pid)


def _signal(pid: int) -> None:
    import signal

    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)


def _wait_for_end(pid: int) -> None:
    import signal

    deadline = time.monotonic() + STOP_SECONDS
    while _alive(pid):
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.05)  # the keeper stops Chroma cleanly, then exits


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:  # a zombie (exited, not yet reaped) answers signal 0 but is gone
        return stat.read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _start(directory: Path, idle: float) -> ServerRecord:
    """Start a keeper and wait until its record names it; two tries (the free port we
    picked can be taken before Chroma binds it)."""
    reason = ""
    for _ in range(2):
        started = _spawn(directory, _free_port(), idle)
        if isinstance(started, ServerRecord):
            return started
        reason = started
        from deep_research.memory.keeper import HELD

        if HELD in reason:
            raise MemoryUnavailable(
                f"memory at {directory} is in use by a process that does not share it "
                f"(MEMORY_SHARE=false, or an older deep-research holding {directory / LOCK_NAME})"
            )
    raise CannotShare(f"the memory server did not start: {reason}")


def _spawn(directory: Path, port: int, idle: float) -> ServerRecord | str:
    try:
        first = subprocess.run(
            keeper_command(directory, port, idle),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=START_SECONDS,
            start_new_session=True,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    try:
        pid = int(first.stdout.strip())
    except ValueError:
        return _last_line(first.stderr) or f"the keeper exited with {first.returncode}"
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        record = read_record(directory)
        if record is not None and (record.pid == pid or serving(record, directory)):
            return record  # ours, or a keeper already serving put its record back
        if not _alive(pid):
            return _log_reason(directory)
        time.sleep(0.05)  # the keeper writes its record once Chroma answers
    _terminate(pid)
    return f"it did not answer within {START_SECONDS:.0f} s"


def _log_reason(directory: Path) -> str:
    from deep_research.memory.keeper import LOG_NAME

    try:
        with (directory / LOG_NAME).open("rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - LOG_TAIL))
            tail = log.read().decode("utf-8", "replace")
    except OSError:
        return "the keeper exited"
    return _last_line(tail) or "the keeper exited"


def _last_line(text: str) -> str:
    text = _ESCAPES.sub("", text)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return without_controls(lines[-1])[:300] if lines else ""


def _lease(directory: Path) -> int:
    """A shared lock on `server.users`, held until this process ends."""
    import fcntl

    from deep_research.memory.keeper import USERS_NAME, open_lock, try_flock

    fd = open_lock(directory / USERS_NAME)
    deadline = time.monotonic() + LEASE_SECONDS
    while not try_flock(fd, fcntl.LOCK_SH):  # the keeper's probe holds it for an instant
        if time.monotonic() > deadline:
            os.close(fd)
            raise CannotShare(f"{directory / USERS_NAME} stayed locked")
        time.sleep(0.01)
    os.set_inheritable(fd, False)
    return fd
