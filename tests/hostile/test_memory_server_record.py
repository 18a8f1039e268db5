"""Threat: a stale or forged `server.json` in a shared memory directory. A dead pid, garbage,
a huge file, a FIFO, a symlink, or the pid and port of a process that is no keeper of this
directory must neither hang a process opening the memory nor send it to that port: the
record is not believed, a real server is found or started, and the writes land there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from deep_research.memory.record import is_keeper, read_record
from tests.support.cli import cli_command

pytestmark = pytest.mark.slow  # starts processes and Chroma servers

REPO = Path(__file__).resolve().parents[2]
OPEN_TIMEOUT = 120.0  # a process that hangs on the record would never end


class Impostor(ThreadingHTTPServer):
    """Answers 200 to anything, as a Chroma heartbeat would, and counts who asked."""

    def __init__(self) -> None:
        self.requests = 0
        impostor = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802  # http.server's name
                impostor.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@pytest.fixture
def impostor() -> Iterator[Impostor]:
    server = Impostor()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def env_for(directory: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "MEMORY_DIR": str(directory),
        "MEMORY_SHARE": "true",
        "MEMORY_SERVER_IDLE": "3",
    }


def write_notes(directory: Path, prefix: str) -> str:
    """A process of the user writes two notes; its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.memory_writer", "write", prefix, "2"],
        cwd=REPO,
        env=env_for(directory),
        input="go\n",
        capture_output=True,
        text=True,
        timeout=OPEN_TIMEOUT,
        check=False,
    )
    assert done.stdout.split() == ["ready", "done"] and done.returncode == 0, done.stderr
    return done.stderr


def stop(directory: Path) -> None:
    subprocess.run(
        cli_command("memory", "stop"),
        env=env_for(directory),
        capture_output=True,
        timeout=60,
        check=True,
    )


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def record(pid: int, port: int, path: Path) -> bytes:
    return json.dumps({"pid": pid, "port": port, "path": str(path)}).encode()


Forgery = Callable[[Path, Impostor], None]


def _dead(d: Path, i: Impostor) -> None:
    (d / "server.json").write_bytes(record(dead_pid(), i.port, d))


def _garbage(d: Path, i: Impostor) -> None:
    (d / "server.json").write_bytes(b'\x00{"pid": [[[[[[' + b"\xff" * 100)


def _huge(d: Path, i: Impostor) -> None:
    (d / "server.json").write_bytes(record(os.getpid(), i.port, d) + b" " * 20_000_000)


def _fifo(d: Path, i: Impostor) -> None:
    os.mkfifo(d / "server.json")  # a reader that opened it blocking would wait for ever


def _symlink(d: Path, i: Impostor) -> None:
    (d.parent / "elsewhere.json").write_bytes(record(os.getpid(), i.port, d))
    (d / "server.json").symlink_to(d.parent / "elsewhere.json")


def _another_process(d: Path, i: Impostor) -> None:
    # A live process (this test's) that is no keeper, and a port that answers heartbeats.
    (d / "server.json").write_bytes(record(os.getpid(), i.port, d))


FORGERIES: dict[str, Forgery] = {
    "dead pid": _dead,
    "garbage": _garbage,
    "huge": _huge,
    "fifo": _fifo,
    "symlink": _symlink,
    "another process on a port that answers": _another_process,
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forged_record_is_not_believed_and_a_real_server_is_started(
    name: str, tmp_path: Path, impostor: Impostor
) -> None:
    directory = tmp_path / "memory"
    directory.mkdir()
    FORGERIES[name](directory, impostor)
    err = write_notes(directory, "after")
    assert "not shared" not in err, err
    found = read_record(directory)
    assert found is not None and is_keeper(found, directory)
    assert found.pid != os.getpid() and found.port != impostor.port
    assert impostor.requests == 0  # not even a heartbeat: the pid was no keeper of ours
    stop(directory)


def test_a_live_keepers_record_forged_to_another_port_still_finds_the_keeper(
    tmp_path: Path, impostor: Impostor
) -> None:
    directory = tmp_path / "memory"
    holder = subprocess.Popen(  # keeps the keeper in use while the record is forged
        [sys.executable, "-m", "tests.support.memory_writer", "hold"],
        cwd=REPO,
        env=env_for(directory),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        real = read_record(directory)
        assert real is not None
        (directory / "server.json").write_bytes(record(real.pid, impostor.port, directory))
        err = write_notes(directory, "second")
        assert "not shared" not in err and "in use" not in err, err
        assert read_record(directory) == real  # the keeper put its own record back
        assert impostor.requests == 0
    finally:
        holder.communicate("", timeout=60)
        stop(directory)
