"""memory.record: `server.json` is outside input, read bounded and believed only for a keeper."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from deep_research.memory.record import (
    MAX_BYTES,
    RECORD_NAME,
    TOKEN_NAME,
    ServerRecord,
    _keeper_args,
    is_keeper,
    keeper_command,
    listens,
    new_token,
    parse_record,
    read_record,
    read_token,
    remove_record,
    write_record,
)


def test_a_written_record_reads_back_and_is_only_its_owners_to_remove(tmp_path: Path) -> None:
    mine = ServerRecord(12345, 4567, str(tmp_path))
    write_record(tmp_path, mine)
    assert read_record(tmp_path) == mine
    assert (tmp_path / "server.json").stat().st_mode & 0o777 == 0o600
    remove_record(tmp_path, pid=999)  # another keeper's removal leaves ours
    assert read_record(tmp_path) == mine
    remove_record(tmp_path, pid=12345)
    assert read_record(tmp_path) is None
    remove_record(tmp_path)  # nothing there: no error


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'{"pid": true, "port": 80, "path": "/m"}',
        b'{"pid": 1, "port": 80, "path": "/m"}',
        b'{"pid": 100, "port": 0, "path": "/m"}',
        b'{"pid": 100, "port": 70000, "path": "/m"}',
        b'{"pid": 100, "port": "80", "path": "/m"}',
        b'{"pid": 100, "port": 80, "path": ""}',
        b'{"pid": 100, "port": 80}',
        b"[" * 100_000,
    ],
)
def test_a_record_of_another_shape_is_none(raw: bytes) -> None:
    assert parse_record(raw) is None


def test_a_huge_fifo_or_symlinked_record_is_not_read(tmp_path: Path) -> None:
    good = json.dumps({"pid": 100, "port": 80, "path": str(tmp_path)}).encode()
    (tmp_path / "server.json").write_bytes(good + b" " * MAX_BYTES)
    assert read_record(tmp_path) is None
    (tmp_path / "server.json").unlink()
    os.mkfifo(tmp_path / "server.json")  # a blocking open would wait for a writer for ever
    assert read_record(tmp_path) is None
    (tmp_path / "server.json").unlink()
    (tmp_path / "real.json").write_bytes(good)
    (tmp_path / "server.json").symlink_to(tmp_path / "real.json")
    assert read_record(tmp_path) is None


def test_only_a_live_keeper_of_this_directory_and_port_is_believed(tmp_path: Path) -> None:
    assert _keeper_args(keeper_command(tmp_path, 4567, 300)) == (str(tmp_path), "4567")
    assert not is_keeper(ServerRecord(os.getpid(), 4567, str(tmp_path)), tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert not is_keeper(ServerRecord(dead.pid, 4567, str(tmp_path)), tmp_path)
    assert not is_keeper(ServerRecord(os.getpid(), 4567, "/elsewhere"), tmp_path)


def test_a_port_nobody_listens_on_is_no_ones(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert listens(os.getpid(), port) in (True, None)  # ours (None without /proc)
        assert listens(1, port) in (False, None)
    assert listens(os.getpid(), port) in (False, None)


def test_writing_a_record_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    """The temporary file's name is the writer's pid, which anyone may guess."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    record = ServerRecord(12345, 4567, str(tmp_path))
    (tmp_path / f".{RECORD_NAME}.{os.getpid()}").symlink_to(victim)
    write_record(tmp_path, record)
    assert victim.read_text() == "keep me"
    assert json.loads((tmp_path / RECORD_NAME).read_text())["port"] == 4567
    assert not (tmp_path / RECORD_NAME).is_symlink()


def test_a_keepers_token_is_new_each_time_and_its_users_only(tmp_path: Path) -> None:
    first = new_token(tmp_path)
    assert read_token(tmp_path) == first and len(first) >= 40
    assert (tmp_path / TOKEN_NAME).stat().st_mode & 0o777 == 0o600
    assert new_token(tmp_path) != first


@pytest.mark.parametrize("planted", [b"", b"x" * 5000, b"short", b"has spaces in a long token"])
def test_a_token_file_that_is_no_token_is_none(tmp_path: Path, planted: bytes) -> None:
    (tmp_path / TOKEN_NAME).write_bytes(planted)
    assert read_token(tmp_path) is None


def test_a_token_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("a" * 43)
    (tmp_path / TOKEN_NAME).symlink_to(elsewhere)
    assert read_token(tmp_path) is None
