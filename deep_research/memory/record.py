"""`server.json`: which process serves a memory directory, and whether to believe it.

The file is written by the keeper (`memory/keeper.py`) once its Chroma server answers, and
read by every other process of the user. It is outside input all the same: a crash leaves
it stale, a reused pid can name an unrelated process, and anything that can write the
directory can forge it. So it is read bounded (a regular file of ours, at most `MAX_BYTES`,
no symlink, no FIFO), typed field by field, and believed only when the pid is alive, is a
keeper of this very directory and port (its command line says so), and, where the system
shows it, is the process listening on that port.

`server.token` is the keeper's secret: Chroma's server asks every request but its heartbeat
for it, so another user who finds the port cannot read or write the memory. The keeper makes
a new one each start, writes it 0600 in the 0700 directory, and hands it to Chroma inside
its own process: it is on no command line and in no environment another process can read.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# The memory directory's own files: a link planted in their place is not followed.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

RECORD_NAME = "server.json"
TOKEN_NAME = "server.token"
MAX_BYTES = 4096
TOKEN_BYTES = 32  # 256 bits: never guessed, over a port any local user can reach
KEEPER_MODULE = "deep_research.memory.keeper"
HOST = "127.0.0.1"
PS_SECONDS = 2.0  # `ps` where /proc is missing (macOS): a command line, bounded


@dataclass(frozen=True)
class ServerRecord:
    """A keeper: its pid, the port its Chroma server listens on, and the directory it serves."""

    pid: int
    port: int
    path: str

    def describe(self) -> str:
        return f"pid {self.pid}, {HOST}:{self.port}"


def read_record(directory: Path) -> ServerRecord | None:
    """The record in `directory`, or None when there is none or it is not a keeper's."""
    raw = _read_own(directory / RECORD_NAME)
    return None if raw is None else parse_record(raw)


def _read_own(path: Path) -> bytes | None:
    """A small regular file of this user's (no link, no FIFO), or None."""
    flags = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # missing, a symlink, unreadable
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None  # another user's file in a shared directory: not our keeper
        return os.read(fd, MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def new_token(directory: Path) -> str:
    """A fresh secret for the keeper of `directory`, written 0600 before Chroma serves."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    _write_whole(directory, TOKEN_NAME, token)
    return token


def read_token(directory: Path) -> str | None:
    """The keeper's secret, or None when the file is missing, not ours, or not a token."""
    raw = _read_own(directory / TOKEN_NAME)
    if raw is None:
        return None
    token = raw.decode("ascii", "replace").strip()
    safe = token.replace("-", "").replace("_", "")
    return token if 16 <= len(token) <= 128 and safe.isascii() and safe.isalnum() else None


def parse_record(raw: bytes) -> ServerRecord | None:
    try:
        data = json.loads(raw[:MAX_BYTES])
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    pid, port, path = data.get("pid"), data.get("port"), data.get("path")
    if not (isinstance(pid, int) and not isinstance(pid, bool) and 1 < pid < 2**22):
        return None
    if not (isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536):
        return None
    if not isinstance(path, str) or not path:
        return None
    return ServerRecord(pid, port, path)


def write_record(directory: Path, record: ServerRecord) -> None:
    """Write the record whole or not at all: readers never see half a file."""
    data = {"pid": record.pid, "port": record.port, "path": record.path}
    _write_whole(directory, RECORD_NAME, json.dumps(data))


def _write_whole(directory: Path, name: str, text: str) -> None:
    """`name` in `directory`, 0600, whole or not at all."""
    temporary = directory / f".{name}.{os.getpid()}"
    temporary.unlink(missing_ok=True)  # a keeper killed mid-write left it, or a link was put
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(temporary, directory / name)


def remove_record(directory: Path, pid: int | None = None) -> None:
    """Remove the record (only `pid`'s, when given: a newer keeper's stays)."""
    if pid is not None:
        found = read_record(directory)
        if found is None or found.pid != pid:
            return
    try:
        os.unlink(directory / RECORD_NAME)
    except FileNotFoundError:
        pass


def keeper_command(directory: Path, port: int, idle: float) -> list[str]:
    """How a keeper is started; `is_keeper` recognises a process by this line."""
    return [
        sys.executable,
        "-P",  # nothing in the starter's working directory is imported by the keeper
        "-m",
        KEEPER_MODULE,
        "--path",
        str(directory),
        "--port",
        str(port),
        "--idle",
        f"{idle:g}",
    ]


def is_keeper(record: ServerRecord, directory: Path) -> bool:
    """Whether `record.pid` is alive and a keeper of `directory` on `record.port`."""
    if record.path != str(directory):
        return False
    try:
        os.kill(record.pid, 0)
    except (ProcessLookupError, PermissionError, OSError):
        return False  # gone, or another user's process
    args = _command_line(record.pid)
    if args is None:
        return False
    if isinstance(args, list):
        return _keeper_args(args) == (str(directory), str(record.port))
    # Only `ps`'s one line (no /proc): the module, the directory and the port must be in it.
    return KEEPER_MODULE in args and f"--path {directory} --port {record.port} " in args + " "


def _keeper_args(args: list[str]) -> tuple[str, str] | None:
    try:
        start = args.index("-m")
    except ValueError:
        return None
    rest = args[start + 1 :]
    if len(rest) < 5 or rest[0] != KEEPER_MODULE or rest[1] != "--path" or rest[3] != "--port":
        return None
    return rest[2], rest[4]


def _command_line(pid: int) -> list[str] | str | None:
    proc = Path(f"/proc/{pid}/cmdline")
    if Path("/proc/self").exists():
        try:
            raw = proc.read_bytes()[: 64 * 1024]
        except OSError:
            return None
        return [part.decode("utf-8", "surrogateescape") for part in raw.split(b"\0") if part]
    try:
        done = subprocess.run(
            ["ps", "-ww", "-o", "command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=PS_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def listens(pid: int, port: int) -> bool | None:
    """Whether `pid` holds the socket listening on 127.0.0.1:`port`; None where the system
    does not show it (no /proc): then the command line and the heartbeat must do."""
    table = Path("/proc/net/tcp")
    if not table.exists():
        return None
    wanted = f"0100007F:{port:04X}"
    inodes = set()
    try:
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 9 and fields[1] == wanted and fields[3] == "0A":  # LISTEN
                inodes.add(f"socket:[{fields[9]}]")
        if not inodes:
            return False
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in inodes:
                    return True
            except OSError:
                continue
    except OSError:
        return None
    return False
