"""Ctrl-C: say "stopping…" at once, unwind the run, and exit without waiting for threads.

`asyncio.run` ends by joining the loop's default executor, and the interpreter joins every
`ThreadPoolExecutor` worker at exit (`concurrent.futures.thread._python_exit`). A worker may
be importing chromadb to open the memory (~4 s), extracting a page, or reading an answer
from the terminal (until Enter), and none of them can be interrupted. So Ctrl-C cancels the
run's task, whose `finally` blocks close the traffic log and the checkpointer, and the
process then ends with `os._exit`, which skips those joins. Nothing a resume needs is lost:
checkpoints are committed as they are written, and the log is flushed line by line.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")


def run_until_interrupted(main: Coroutine[Any, Any, T], on_stop: Callable[[], None]) -> T:
    """Run `main` on a new event loop, like `asyncio.run`, but Ctrl-C works at once.

    The first Ctrl-C calls `on_stop` and cancels `main`; once it has unwound, this raises
    `KeyboardInterrupt` without waiting for worker threads (the caller should then
    `exit_now`). A second Ctrl-C raises `KeyboardInterrupt` straight away.
    """
    loop = asyncio.new_event_loop()
    task = loop.create_task(main)
    stopping = False

    def on_sigint() -> None:
        nonlocal stopping
        if stopping or task.done():
            raise KeyboardInterrupt  # propagates out of `run_until_complete`
        stopping = True
        on_stop()
        task.cancel()

    # The loop's own handler, not `signal.signal`: the kernel may deliver SIGINT to a worker
    # thread (one blocked reading the terminal, say), and only the loop's wakeup fd then
    # rouses a main thread asleep in `select` with nothing scheduled.
    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        handled = True
    except NotImplementedError:  # Windows: Ctrl-C raises KeyboardInterrupt where it lands
        handled = False
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        if stopping:
            raise KeyboardInterrupt from None
        raise
    except KeyboardInterrupt:
        stopping = True
        raise
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)
        if not stopping:
            # Finished (or failed) on its own: close down as `asyncio.run` does.
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()


def exit_now(code: int, last: Callable[[], None] | None = None, grace: float = 1.0) -> NoReturn:
    """End the process without joining worker threads, after giving `last` up to `grace` s.

    `last` runs in a daemon thread, so a slow one (LangSmith flushing to an unreachable
    endpoint takes ~11 s) cannot hold the exit.
    """
    if last is not None:
        worker = threading.Thread(target=last, name="last-words", daemon=True)
        worker.start()
        worker.join(grace)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
