"""Where the memory lives, and the one process allowed to write a local store.

A local store (`chromadb.PersistentClient` on `MEMORY_DIR`) is for one process at a time:
two processes writing one directory raise no error but lose writes silently. So whoever
writes the directory holds `MEMORY_DIR/lock` for its whole life: the keeper of a shared
directory (`memory/sharing.py`: a Chroma server every process of the user connects to,
the default), or one process that opens it embedded (`MEMORY_SHARE=false`, or sharing
could not start), and another process is refused with a message saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from deep_research.config.endpoints import read_endpoints
from deep_research.config.private import private_directory
from deep_research.errors import ReadableError

LOCK_NAME = "lock"
CATALOGUE = "chroma.sqlite3"  # the file in which Chroma's persistent client keeps its catalogue


class MemoryUnavailable(ReadableError, RuntimeError):
    """The memory cannot be used; the message says why and what to do. Runs go on without."""


@dataclass(frozen=True)
class Location:
    """A local directory, or a Chroma server."""

    path: Path | None = None
    host: str | None = None
    port: int = 8000
    # A directory shared through a local server its first user starts (`memory.sharing`).
    shared: bool = False

    def describe(self) -> str:
        if self.host is not None:
            return f"Chroma server {self.host}:{self.port}"
        return f"{self.path}"


def configured() -> Location:
    """The memory named by the environment: CHROMA_HOST wins over MEMORY_DIR."""
    endpoints = read_endpoints()
    if endpoints.chroma_host:
        return Location(host=endpoints.chroma_host, port=endpoints.chroma_port)
    path = Path(os.path.abspath(endpoints.memory_dir))
    return Location(path=path, shared=endpoints.memory_share)


def has_store(location: Location) -> bool:
    """Whether a store may be there: a server always may; a directory only once Chroma has
    written its catalogue (a user who never finished a run has none, and nothing to recall)."""
    if location.host is not None:
        return True
    try:
        return location.path is not None and (location.path / CATALOGUE).is_file()
    except OSError:  # a name too long, a directory not ours to search: nothing to read there
        return False


def configured_store() -> Location | None:
    """The configured location if a store may be there, else None. Blocking (it asks for
    the working directory and the disk): call it in a thread, never on the event loop."""
    location = configured()
    return location if has_store(location) else None


def hold_directory(path: Path) -> FileLock:
    """Take `path`'s lock for this process, or raise `MemoryUnavailable` if another has it."""
    try:
        private_directory(path)
    except OSError as error:
        raise MemoryUnavailable(f"memory directory {path} cannot be created: {error}") from None
    lock = FileLock(str(path / LOCK_NAME), timeout=0, thread_local=False, mode=0o600)
    try:
        lock.acquire()
    except Timeout:
        raise MemoryUnavailable(
            f"memory at {path} is in use by another process (lock {path / LOCK_NAME}); a "
            "store opened without sharing takes one process at a time. Leave MEMORY_SHARE "
            "on (the default) in every process to share it."
        ) from None
    except OSError as error:
        raise MemoryUnavailable(
            f"memory lock {path / LOCK_NAME} cannot be taken: {error}"
        ) from None
    return lock
