"""memory.keeper: the launch lock admits one, and "unused" means no lease is held."""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

from deep_research.memory.keeper import (
    USERS_NAME,
    Keeper,
    heartbeat,
    launch_lock,
    open_lock,
    try_flock,
)


def test_the_launch_lock_admits_one_holder_at_a_time(tmp_path: Path) -> None:
    with launch_lock(tmp_path, 1.0) as first:
        assert first
        with launch_lock(tmp_path, 0.2) as second:
            assert not second  # waited, bounded, and was refused
    with launch_lock(tmp_path, 0.2) as again:
        assert again  # let go when the first holder was done


def test_the_server_is_unused_only_while_no_process_holds_a_lease(tmp_path: Path) -> None:
    keeper = Keeper(tmp_path, 1, idle=1.0)
    assert keeper._unused()
    lease = open_lock(tmp_path / USERS_NAME)  # a second descriptor: as another process's
    try:
        assert try_flock(lease, fcntl.LOCK_SH)
        assert not keeper._unused()
        other = open_lock(tmp_path / USERS_NAME)
        assert try_flock(other, fcntl.LOCK_SH)  # the probe let go: others still attach
        os.close(other)
    finally:
        os.close(lease)
    assert keeper._unused()


def test_a_port_that_does_not_answer_has_no_heartbeat() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert not heartbeat(port, seconds=1.0)
