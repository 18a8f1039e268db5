"""One process per thread in a directory: the lock a run holds while it runs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from deep_research.cli.args import UsageError
from deep_research.cli.runs import check_thread_id

if TYPE_CHECKING:
    from deep_research.cli.runs import Home


@contextmanager
def only_session(home: Home, thread_id: str) -> Iterator[None]:
    """Held while this process runs `thread_id`: a `--resume` or `--follow-up` of it from
    another terminal in this directory is refused (exit 2) before it logs or runs anything,
    rather than run beside the first on the same checkpoints. The kernel holds the lock: a
    killed process leaves it free."""
    from filelock import FileLock, Timeout

    locks = home.root / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    try:
        lock = FileLock(locks / f"{check_thread_id(thread_id)}.lock", timeout=0)
        lock.acquire()
    except Timeout:
        raise UsageError(
            f"thread {thread_id!r} is running in another process: let it finish (or stop "
            "it), then try again"
        ) from None
    try:
        yield
    finally:
        lock.release()
