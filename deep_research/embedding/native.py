"""Calls into native code that lets go of the GIL, kept clear of the interpreter's end.

The model's compute thread and a pass's part threads are daemon threads, so a pass under
way never holds the process up for long. But Python 3.11 to 3.13 end a daemon thread that
takes the GIL back while the interpreter finalizes by unwinding its stack, and an unwind
through onnxruntime's C++ aborts the whole process: "terminate called without an active
exception", exit status -6 (SIGABRT), after the run's output was written. A background pass
(memory preparing pages) may well be under way when a run ends.

So each call of the encoder that lets go of the GIL (onnxruntime's session, made or run;
the tokenizer's batch) is made inside `native_call()`. At exit (an `atexit` hook, which
runs before the interpreter finalizes, while daemon threads still run), calls not yet
begun are refused with `ProcessExiting`, those under way are asked to stop (a session's
run ends within one of its operators: onnxruntime's `RunOptions.terminate`), and the
process waits for them, `EXIT_WAIT` at the very most. A forked child starts with no calls
under way and its own lock.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from deep_research.errors import DeepResearchError

EXIT_WAIT = 60.0  # seconds the process waits at exit for native calls under way


class ProcessExiting(DeepResearchError, ValueError):
    """A native call asked for once the process began to exit; no one waits for its answer
    (a ValueError, as the encoder's own errors are, for the callers that degrade on them)."""


class NativeCalls:
    """The native calls under way (each with how to stop it, if it can be), and whether new
    ones may begin."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._under_way: dict[object, Callable[[], object] | None] = {}
        self._closed = False

    @contextmanager
    def call(self, stop: Callable[[], object] | None = None) -> Iterator[None]:
        """Around one native call: refused once `close()` began, counted until it returns;
        `stop`, if given, is called from another thread to end it early at exit."""
        token = object()
        with self._changed:
            if self._closed:
                raise ProcessExiting("the process is exiting: no new pass begins")
            self._under_way[token] = stop
        try:
            yield
        finally:
            with self._changed:
                del self._under_way[token]
                self._changed.notify_all()

    def close(self, wait: float = EXIT_WAIT) -> bool:
        """Refuse new calls, stop those under way that can be, and wait up to `wait`
        seconds for them all to return; whether they did."""
        with self._changed:
            self._closed = True
            for stop in list(self._under_way.values()):
                if stop is not None:
                    stop()
            return self._changed.wait_for(lambda: not self._under_way, wait)

    def forked(self) -> None:
        """In a forked child: the parent's calls under way are not this process's."""
        self._changed = threading.Condition()
        self._under_way = {}


_calls = NativeCalls()
atexit.register(_calls.close)
os.register_at_fork(after_in_child=_calls.forked)


def native_call(stop: Callable[[], object] | None = None) -> AbstractContextManager[None]:
    """The process's gate around one call into onnxruntime or tokenizers (`stop` ends it
    early, from another thread)."""
    return _calls.call(stop)
