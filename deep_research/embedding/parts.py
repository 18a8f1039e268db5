"""A forward pass cut into parts computed at once, one a core (for `embedding.minilm`).

numpy lets go of the interpreter in its matrix products and element-wise passes, so the
parts of a pass run side by side, each with one BLAS thread: on 2 cores, 72 search results
took 0.37 s in two parts against 0.65-0.69 s in one (`python -m benchmarks.embedding`:
0.58x the wall time quiet, 0.78x with two busy loops beside it).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future

from deep_research.embedding.weights import FloatArray

MAX_PARTS = 4  # threads that compute one pass, the model's own included
MIN_PART = 2  # texts: fewer are not worth a thread of their own

Compute = Callable[[list[str], int], FloatArray]  # (texts, batch) → their vectors
_Job = tuple[Compute, list[str], int, "Future[FloatArray]"]


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity
        return os.cpu_count() or 1


def deal(texts: list[str], cores: int) -> list[list[str]]:
    """`texts` dealt into parts of at least `MIN_PART`, one a core up to `MAX_PARTS`: longest
    first, there and back (the first part does not get the longest of every round), so that
    every part pads and computes about as much as the others. One part is `texts` itself."""
    count = max(1, min(cores, MAX_PARTS, len(texts) // MIN_PART))
    if count == 1:
        return [texts]
    parts: list[list[str]] = [[] for _ in range(count)]
    for rank, text in enumerate(sorted(texts, key=len, reverse=True)):
        turn, place = divmod(rank, count)
        parts[place if turn % 2 == 0 else count - 1 - place].append(text)
    return parts


class PartThreads:
    """The threads that compute a pass's other parts while the model's thread computes the
    first: daemon threads (a pass under way never holds up the process's exit), started
    when first needed, each running `setup` first (BLAS held to one thread: a library built
    with OpenMP keeps that setting a thread). One thread at a time calls `compute` (the
    model's own), so nothing here needs a lock, nor one renewed in a forked child."""

    def __init__(self, setup: Callable[[], object]) -> None:
        self._setup = setup
        self._inboxes: list[queue.SimpleQueue[_Job]] = []
        self._pid = 0  # the process whose threads these are

    def compute(self, compute: Compute, parts: list[list[str]], batch: int) -> list[FloatArray]:
        """`compute` of each part, in batches of `batch` texts; the first failure is raised
        once every part has ended. A part no thread can be started for is computed here."""
        futures: list[Future[FloatArray]] = []
        for index, part in enumerate(parts[1:]):
            future: Future[FloatArray] = Future()
            inbox = self._inbox(index)
            if inbox is None:
                _run(compute, part, batch, future)
            else:
                inbox.put((compute, part, batch, future))
            futures.append(future)
        first: Future[FloatArray] = Future()
        _run(compute, parts[0], batch, first)
        futures.insert(0, first)
        failures = [error for f in futures if (error := f.exception()) is not None]
        try:
            if failures:
                raise failures[0]
            return [f.result() for f in futures]
        finally:
            failures.clear()  # no cycle through this frame's traceback keeps the parts
            futures.clear()

    def _inbox(self, index: int) -> queue.SimpleQueue[_Job] | None:
        if self._pid != os.getpid():  # first use, or a forked child (no threads)
            self._inboxes = []
            self._pid = os.getpid()
        while len(self._inboxes) <= index:
            inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()
            thread = threading.Thread(
                target=self._serve, args=(inbox,), name="minilm-part", daemon=True
            )
            try:
                thread.start()
            except RuntimeError:  # no thread to be had (a container's limit)
                return None
            self._inboxes.append(inbox)
        return self._inboxes[index]

    def _serve(self, inbox: queue.SimpleQueue[_Job]) -> None:
        self._setup()
        while True:
            compute, part, batch, future = inbox.get()
            _run(compute, part, batch, future)
            del compute, part, future  # nothing of a pass is kept while the thread waits


def _run(compute: Compute, part: list[str], batch: int, future: Future[FloatArray]) -> None:
    try:
        future.set_result(compute(part, batch))
    except BaseException as error:  # noqa: BLE001  # raised by the pass's own thread
        future.set_exception(error)
