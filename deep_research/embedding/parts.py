"""A forward pass cut into parts computed at once, one a core (for `embedding.minilm`).

onnxruntime lets go of the interpreter while it computes the layers (one thread a call),
as numpy does in its element-wise passes, so the parts of a pass run side by side.
`python -m benchmarks.embedding` (docs/speed.md) measured 0.51x the wall time of one part on
2 quiet cores, 0.70x with two busy loops beside it, for the same CPU time.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from deep_research.embedding.weights import FloatArray

log = logging.getLogger(__name__)

MAX_PARTS = 4  # threads that compute one pass, the model's own included
MIN_PART = 2  # texts: fewer are not worth a thread of their own
CGROUPS = Path("/sys/fs/cgroup")
NO_QUOTA = 1 << 16  # CPUs: no quota set

Compute = Callable[[list[str], int], FloatArray]  # (texts, batch) → their vectors
_Job = tuple[Compute, list[str], int, "Future[FloatArray]"]


def cores() -> int:
    """The cores this process may use: those it may run on, no more than its CPU quota (a
    container's `--cpus`, where parts past it would only be throttled)."""
    try:
        allowed = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no affinity
        allowed = os.cpu_count() or 1
    return max(1, min(allowed, _quota()))


@functools.cache
def _quota() -> int:
    return quota_cores(Path("/proc/self/cgroup"), CGROUPS)


def quota_cores(membership: Path, root: Path) -> int:
    """The CPUs the cgroup quota lets this process use, rounded up: the least that its
    cgroup or any parent sets (v2's `cpu.max`, v1's `cpu.cfs_quota_us` over
    `cpu.cfs_period_us`), read under `root` from the process's `membership` file;
    `NO_QUOTA` where none is set or none can be read (not Linux)."""
    try:
        lines = membership.read_text().splitlines()
    except (OSError, ValueError):  # ValueError: not UTF-8
        return NO_QUOTA
    mounts: list[tuple[Path, str]] = []  # (a hierarchy's mount, the process's cgroup in it)
    for line in lines:
        hierarchy, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if hierarchy == "0" and controllers == "":  # v2: one hierarchy
            mounts.append((root, path))
        elif "cpu" in controllers.split(","):  # v1: the cpu controller's own mount
            mounts += [(root / "cpu", path), (root / "cpu,cpuacct", path)]
    found = [
        limit
        for mount, path in mounts
        for level in _up(mount, mount / path.strip().lstrip("/"))
        if (limit := _limit(level)) is not None
    ]
    return min(found, default=NO_QUOTA)


def _up(mount: Path, folder: Path) -> list[Path]:
    """`folder` and its parents, up to the hierarchy's `mount`."""
    return [level for level in [folder, *folder.parents] if level.is_relative_to(mount)]


def _limit(folder: Path) -> int | None:
    """The CPUs one cgroup folder's quota allows (rounded up), or None: no quota, no file."""
    try:
        if (v2 := folder / "cpu.max").is_file():
            quota, period = v2.read_text().split()[:2]
        else:
            quota = (folder / "cpu.cfs_quota_us").read_text().strip()
            period = (folder / "cpu.cfs_period_us").read_text().strip()
        if quota in ("max", "-1"):
            return None
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError, ZeroDivisionError):
        return None


def deal(texts: list[str], available: int) -> list[list[str]]:
    """`texts` dealt into parts of at least `MIN_PART`, one for each of `available` cores up
    to `MAX_PARTS`: longest first, there and back (the first part does not get the longest
    of every round), so that every part pads and computes about as much as the others. One
    part is `texts` itself."""
    count = max(1, min(available, MAX_PARTS, len(texts) // MIN_PART))
    if count == 1:
        return [texts]
    parts: list[list[str]] = [[] for _ in range(count)]
    for rank, text in enumerate(sorted(texts, key=len, reverse=True)):
        turn, place = divmod(rank, count)
        parts[place if turn % 2 == 0 else count - 1 - place].append(text)
    return parts


class PartThreads:
    """The threads that compute a pass's other parts while the model's thread computes the
    first: daemon threads (a pass under way holds up the process's exit only for the batch
    each is computing: embedding.native), started
    when first needed and kept, each running `setup` first (BLAS held to one thread: a
    library built with OpenMP keeps that setting a thread). One thread at a time calls
    `compute` (the model's own), so nothing here needs a lock, nor one renewed in a child."""

    def __init__(self, setup: Callable[[], object]) -> None:
        self._setup = setup
        self._inboxes: list[queue.SimpleQueue[_Job]] = []
        self._pid = 0  # the process whose threads these are

    def compute(self, work: Compute, parts: list[list[str]], batch: int) -> list[FloatArray]:
        """`work` of each part, in batches of `batch` texts; the first failure is raised once
        every part has ended. A part no thread can be started for is computed here."""
        futures: list[Future[FloatArray]] = [Future() for _ in parts]
        for index in range(1, len(parts)):
            inbox = self._inbox(index - 1)
            if inbox is None:
                _run(work, parts[index], batch, futures[index])
            else:
                inbox.put((work, parts[index], batch, futures[index]))
        _run(work, parts[0], batch, futures[0])
        failure = _first_failure(futures)  # every part waited for
        if failure is None:
            return [future.result() for future in futures]
        futures.clear()  # the raised error's traceback holds this frame: not the futures
        try:
            raise failure
        finally:
            failure = None

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
            except RuntimeError:  # no thread to be had (a container's limit): asked again
                log.debug("no thread for a part of the pass: computed by the model's thread")
                return None
            self._inboxes.append(inbox)
        return self._inboxes[index]

    def _serve(self, inbox: queue.SimpleQueue[_Job]) -> None:
        # A thread that ended would leave its parts waiting for ever: it never does.
        try:
            self._setup()
        except Exception:  # BLAS keeps its threads: slower, still right
            log.warning("a part thread could not hold BLAS to one thread", exc_info=True)
        while True:
            work, part, batch, future = inbox.get()
            _run(work, part, batch, future)
            del work, part, future  # nothing of a pass is kept while the thread waits


def _run(work: Compute, part: list[str], batch: int, future: Future[FloatArray]) -> None:
    try:
        future.set_result(work(part, batch))
    except BaseException as error:  # noqa: BLE001  # raised by the pass's own thread
        future.set_exception(error)
        del future  # the error's traceback keeps this frame, not the future holding it


def _first_failure(futures: list[Future[FloatArray]]) -> BaseException | None:
    """The first part's error, once every part has ended; None when none failed."""
    failures = [future.exception() for future in futures]
    return next((failure for failure in failures if failure is not None), None)
