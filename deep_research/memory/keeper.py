"""The keeper: one Chroma server for one memory directory, until no process uses it.

    python -m deep_research.memory.keeper --path DIR --port PORT --idle SECONDS

Started by the first process that opens a shared memory (`memory/sharing.py`), it detaches
(a second fork: it outlives its starter, and init reaps it), takes the directory's lock
(`MEMORY_DIR/lock`, the one an embedded store takes, so the directory never has two
writers), runs Chroma's server in a thread on 127.0.0.1:PORT, and writes `server.json`
once it answers. Any local user can reach that port, so the server is chromadb's Python
one with its token authentication (`chroma run`'s server takes no credentials): the token
is made here (`record.new_token`, `server.token`, 0600) and every client reads it there.
Everything the keeper creates is its user's only (umask 077).

Every process using it holds a shared lock on `server.users`; when none has for SECONDS, or
on SIGTERM (`deep-research memory stop`), it stops Chroma (the requests under way finish),
removes `server.json` and exits, all under the launch lock so a
process attaching at that moment starts a new keeper instead of finding a dying one.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import http.client
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from deep_research.memory import chroma
from deep_research.memory.record import (
    HOST,
    NOFOLLOW,
    ServerRecord,
    new_token,
    read_record,
    remove_record,
    write_record,
)

if TYPE_CHECKING:
    import uvicorn

LOCK_NAME = "lock"  # location.LOCK_NAME: the directory's one writer
LAUNCH_NAME = "server.lock"  # held while a server is looked up, started or stopped
USERS_NAME = "server.users"  # shared-locked by every process using the server
LOG_NAME = "server.log"
START_SECONDS = 60.0  # Chroma's first answer; a loaded machine takes seconds
STOP_SECONDS = 10.0  # Chroma's clean shutdown, then the process ends regardless
LAUNCH_WAIT_SECONDS = 10.0
POLL_SECONDS = 0.5  # how often the keeper looks for users: the idle clock's resolution
LOCK_WAIT_SECONDS = 5.0  # a keeper that is stopping lets go of the directory within it
HELD = "is held by another process"  # the log's words when the directory has another writer
TOKEN_AUTHN = "chromadb.auth.token_authn.TokenAuthenticationServerProvider"
TOKEN_CLIENT = "chromadb.auth.token_authn.TokenAuthClientProvider"
PRIVATE_UMASK = 0o077  # the store, its log and its lock files: this user's only


def open_lock(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)


def try_flock(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def launch_lock(directory: Path, seconds: float) -> Iterator[bool]:
    """The launch lock, waited for at most `seconds`; yields whether it was taken."""
    fd = open_lock(directory / LAUNCH_NAME)
    try:
        deadline = time.monotonic() + seconds
        taken = try_flock(fd, fcntl.LOCK_EX)
        while not taken and time.monotonic() < deadline:
            time.sleep(0.05)  # another process is starting or stopping the server
            taken = try_flock(fd, fcntl.LOCK_EX)
        yield taken
    finally:
        os.close(fd)  # releases the lock


def heartbeat(port: int, seconds: float = 2.0) -> bool:
    connection = http.client.HTTPConnection(HOST, port, timeout=seconds)
    try:
        connection.request("GET", "/api/v2/heartbeat")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


class Keeper:
    def __init__(self, directory: Path, port: int, idle: float) -> None:
        self.directory, self.port, self.idle = directory, port, idle
        self.stopping = threading.Event()
        self.users = open_lock(directory / USERS_NAME)
        self.chroma = threading.Thread(target=self._serve, name="chroma", daemon=True)
        self.failure = "it ended"
        self.token = new_token(directory)  # before Chroma serves: no client waits for it
        self.server: uvicorn.Server | None = None

    def _serve(self) -> None:
        try:
            self.server = chroma_server(self.directory, HOST, self.port, self.token)
            self.server.run()
            if self.server.started is False:
                self.failure = f"{HOST}:{self.port} could not be served"
        except BaseException as error:  # noqa: BLE001  # said in the log, for the starter
            self.failure = f"{type(error).__name__}: {error}"

    def run(self) -> int:
        signal.signal(signal.SIGTERM, lambda *_: self.stopping.set())
        signal.signal(signal.SIGINT, lambda *_: self.stopping.set())
        self.chroma.start()
        if not self._wait_until_serving():
            why = self.failure if not self.chroma.is_alive() else "no answer"
            print(f"keeper: Chroma did not serve on {HOST}:{self.port}: {why}", file=sys.stderr)
            return 1
        record = ServerRecord(os.getpid(), self.port, str(self.directory))
        write_record(self.directory, record)
        print(f"keeper: serving {self.directory} on {HOST}:{self.port}", flush=True)
        idle_since: float | None = None
        while not self.stopping.wait(POLL_SECONDS):
            if not self.chroma.is_alive():
                print("keeper: Chroma's server ended", file=sys.stderr)
                break
            self._keep_record(record)
            if not self._unused():
                idle_since = None
                continue
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= self.idle and self._stop_if_unused():
                return 0
        with launch_lock(self.directory, LAUNCH_WAIT_SECONDS):
            self._shut_down()
        return 0

    def _keep_record(self, record: ServerRecord) -> None:
        """Put the record back if it was removed or overwritten (a forged one, taken out of
        the way by a process that did not believe it): this keeper still serves."""
        if read_record(self.directory) != record:
            try:
                write_record(self.directory, record)
            except OSError as error:  # a folder in its place: said, and tried again
                print(f"keeper: server.json cannot be written: {error}", file=sys.stderr)

    def _wait_until_serving(self) -> bool:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and not self.stopping.is_set():
            if not self.chroma.is_alive():  # e.g. the port was taken before Chroma bound it
                return False
            if heartbeat(self.port):
                return True
            time.sleep(0.1)
        return False

    def _unused(self) -> bool:
        if not try_flock(self.users, fcntl.LOCK_EX):
            return False
        fcntl.flock(self.users, fcntl.LOCK_UN)  # a probe: attaching must not wait for it
        return True

    def _stop_if_unused(self) -> bool:
        """Stop, unless a process attached meanwhile (it holds the launch lock to attach)."""
        with launch_lock(self.directory, POLL_SECONDS) as taken:
            if not taken or not try_flock(self.users, fcntl.LOCK_EX):
                return False
            print(f"keeper: unused for {self.idle:g} s, stopping", flush=True)
            self._shut_down()
            return True

    def _shut_down(self) -> None:
        remove_record(self.directory, os.getpid())
        if self.server is not None:
            self.server.should_exit = True  # finishes the requests under way, then stops
        self.chroma.join(STOP_SECONDS)


def chroma_server(directory: Path, host: str, port: int, token: str) -> uvicorn.Server:
    """chromadb's server for `directory` on host:port, asking every request for `token`."""
    import uvicorn

    chroma.load()
    from chromadb.config import Settings

    settings = Settings(
        is_persistent=True,
        persist_directory=str(directory),
        anonymized_telemetry=False,
        chroma_server_authn_provider=TOKEN_AUTHN,
        chroma_server_authn_credentials=token,
    )
    app = fastapi_server()(settings).app()
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    return uvicorn.Server(config)


def fastapi_server() -> type:
    """chromadb's FastAPI server class. It imports OpenTelemetry's FastAPI instrumentation,
    which chromadb does not install; the keeper traces nothing, so a no-op stands in."""
    import types

    name = "chromadb.telemetry.opentelemetry.fastapi"
    try:
        __import__(name)
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("opentelemetry"):
            raise
        stand_in = types.ModuleType(name)
        stand_in.instrument_fastapi = lambda *_args, **_kwargs: None  # type: ignore[attr-defined]
        sys.modules[name] = stand_in
    from chromadb.server.fastapi import FastAPI

    return FastAPI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m " + __spec__.name if __spec__ else None)
    parser.add_argument("--path", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--idle", type=float, required=True)
    args = parser.parse_args(argv)
    directory: Path = args.path
    child = os.fork()  # detach: the starter waits for this first process only
    if child:
        print(child, flush=True)
        return 0
    os.setsid()
    os.umask(PRIVATE_UMASK)
    # Appended to until the directory is ours: a keeper refused it keeps the running one's log.
    log = os.open(directory / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND | NOFOLLOW, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    os.environ.setdefault("RUST_LOG", "warn")  # Chroma logs every request at info: unbounded
    lock = open_lock(directory / LOCK_NAME)
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while not try_flock(lock, fcntl.LOCK_EX):
        if time.monotonic() > deadline:
            print(f"keeper: {directory / LOCK_NAME} {HELD}", file=sys.stderr, flush=True)
            os._exit(1)
        time.sleep(0.1)  # a keeper that stopped a moment ago is still exiting
    os.ftruncate(log, 0)
    code = Keeper(directory, args.port, args.idle).run()
    sys.stdout.flush()
    sys.stderr.flush()
    # Let go of the directory now: a process whose threads are still being torn down (a
    # zombie to `_alive`) keeps its files open, and the starter, told the keeper ended,
    # opens the directory itself at once.
    os.close(lock)
    os._exit(code)  # Chroma's thread is not joined past STOP_SECONDS


if __name__ == "__main__":
    sys.exit(main())
