"""Threat: another user of the machine reads or writes the memory and the library. The
keeper's port is on 127.0.0.1, which every local user can reach, and its pid is in `ps`: its
Chroma server must refuse a client without the keeper's token, the token must be on no
command line, and the directory and everything in it must be the user's only. As root, the
other user is a real one (nobody, by `os.setuid` in a child process)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.memory.record import TOKEN_NAME, read_record, read_token
from tests.support.cli import cli_command

pytestmark = pytest.mark.slow  # starts a keeper and its Chroma server

REPO = Path(__file__).resolve().parents[2]
OPEN_TIMEOUT = 300.0  # a loaded machine starts Chroma and MiniLM slowly
NOBODY = 65534
COLLECTIONS = "/api/v2/tenants/default_tenant/databases/default_database/collections"


def env_for(directory: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "MEMORY_DIR": str(directory),
        "MEMORY_SHARE": "true",
        "MEMORY_SERVER_IDLE": "600",
    }


def write_notes(directory: Path, prefix: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.support.memory_writer", "write", prefix, "2"],
        cwd=REPO,
        env=env_for(directory),
        input="go\n",
        capture_output=True,
        text=True,
        timeout=OPEN_TIMEOUT,
        check=False,
    )


@pytest.fixture(scope="module")
def directory() -> Iterator[Path]:
    """A memory directory other users could reach if its own mode let them (its parent is
        0711, unlike pytest's 0700 temporary folders), with a note written through its keeper:
    one keeper for the module, whose last test takes its token away."""
    base = Path(tempfile.mkdtemp(prefix="dr-other-users-"))
    base.chmod(0o711)
    where = base / "memory"
    done = write_notes(where, "private")
    try:
        assert done.stdout.split() == ["ready", "done"], done.stderr
        yield where
    finally:
        subprocess.run(cli_command("memory", "stop"), env=env_for(where), timeout=60, check=False)
        subprocess.run(["rm", "-rf", str(base)], check=False)


def status(port: int, headers: dict[str, str]) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{COLLECTIONS}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_the_keepers_server_refuses_a_client_without_its_token(directory: Path) -> None:
    record = read_record(directory)
    token = read_token(directory)
    assert record is not None and token is not None
    assert status(record.port, {}) in (401, 403)
    assert status(record.port, {"Authorization": "Bearer " + "x" * 43}) in (401, 403)
    assert status(record.port, {"Authorization": f"Bearer {token}"}) == 200


def test_the_token_is_on_no_command_line_and_in_no_environment(directory: Path) -> None:
    record = read_record(directory)
    token = read_token(directory)
    assert record is not None and token is not None
    assert token.encode() not in Path(f"/proc/{record.pid}/cmdline").read_bytes()
    assert token.encode() not in Path(f"/proc/{record.pid}/environ").read_bytes()


def test_the_memory_directory_and_everything_in_it_are_the_users_only(directory: Path) -> None:
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    found = [directory, *directory.rglob("*")]
    assert directory / "chroma.sqlite3" in found and directory / TOKEN_NAME in found
    open_to_others = [str(p) for p in found if p.lstat().st_mode & 0o077 and not p.is_symlink()]
    assert open_to_others == []


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")
def test_another_user_reads_nothing_and_writes_nothing(directory: Path) -> None:
    record = read_record(directory)
    assert record is not None
    # Everything is imported before the switch: nobody cannot read this Python's library.
    probe = f"""
import encodings.idna, json, os, socket, sys
os.setgid({NOBODY}); os.setuid({NOBODY})
found = {{}}
for name in ("chroma.sqlite3", "{TOKEN_NAME}", "server.json"):
    try:
        open(os.path.join(sys.argv[1], name), "rb").read(1)
        found[name] = "read"
    except OSError as error:
        found[name] = type(error).__name__
try:
    open("/proc/{record.pid}/environ", "rb").read(1)
    found["environ"] = "read"
except OSError as error:
    found["environ"] = type(error).__name__
body = b'{{"name": "planted"}}'
head = "POST {COLLECTIONS} HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\n"
head += "Content-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(body)
with socket.create_connection(("127.0.0.1", {record.port}), timeout=30) as sock:
    sock.sendall(head.encode() + body)
    found["write"] = int(sock.recv(4096).split(b" ")[1])
print(json.dumps(found))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe, str(directory)],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["chroma.sqlite3"] == found[TOKEN_NAME] == "PermissionError", found
    assert found["server.json"] == found["environ"] == "PermissionError", found
    assert found["write"] in (401, 403), found


def test_a_keeper_whose_token_file_is_gone_says_how_to_fix_it(directory: Path) -> None:
    (directory / TOKEN_NAME).unlink()
    done = write_notes(directory, "after")
    assert "done" not in done.stdout.split()
    assert "server.token" in done.stderr and "deep-research memory stop" in done.stderr
