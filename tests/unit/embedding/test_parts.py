"""embedding/parts.py: how a pass is dealt into parts, and the threads that compute them."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from deep_research.embedding import parts
from deep_research.embedding.parts import MAX_PARTS, MIN_PART, PartThreads
from deep_research.embedding.weights import FloatArray


def test_parts_are_dealt_longest_first_there_and_back() -> None:
    texts = [str(i) * length for i, length in enumerate([50, 1, 40, 2, 30, 3, 20, 4, 10])]
    # By length: 0, 2, 4, 6, 8, 7, 5, 3, 1; dealt 0 2 | 6 4 | 8 7 | 3 5 | 1.
    assert parts.deal(texts, available=2) == [
        [texts[i] for i in (0, 6, 8, 3, 1)],
        [texts[i] for i in (2, 4, 7, 5)],
    ]
    assert len(parts.deal(texts, available=64)) == MAX_PARTS
    assert all(len(part) >= MIN_PART for part in parts.deal(texts, available=64))
    few = texts[: 2 * MIN_PART - 1]
    assert parts.deal(few, available=8) == [few], "too few for two parts: one, in their order"
    assert parts.deal(texts, available=1) == [texts]
    assert parts.deal([], available=4) == [[]]


def _vectors(texts: list[str]) -> FloatArray:
    return np.array([[float(len(text))] for text in texts], dtype=np.float32)


def test_the_parts_are_computed_at_once_each_set_up_thread_with_its_share_of_a_batch() -> None:
    set_up: list[str] = []
    meeting = threading.Barrier(3, timeout=5)  # parts one after another never all meet
    seen: list[tuple[str, int]] = []

    def compute(texts: list[str], batch: int) -> FloatArray:
        seen.append((threading.current_thread().name, batch))
        meeting.wait()
        return _vectors(texts)

    threads = PartThreads(lambda: set_up.append(threading.current_thread().name))
    cut = [["a", "bb"], ["ccc"], ["dddd", "e"]]
    got = threads.compute(compute, cut, batch=10)
    assert [v.ravel().tolist() for v in got] == [[1, 2], [3], [4, 1]]
    assert sorted(seen) == [("MainThread", 10), ("minilm-part", 10), ("minilm-part", 10)]
    again = threads.compute(lambda texts, batch: _vectors(texts), cut, batch=10)
    assert [v.ravel().tolist() for v in again] == [[1, 2], [3], [4, 1]]
    assert set_up == ["minilm-part", "minilm-part"], "two threads, kept, each set up once"


def test_a_failing_part_is_raised_once_every_part_has_ended() -> None:
    ended: list[str] = []
    release = threading.Event()

    def compute(texts: list[str], batch: int) -> FloatArray:
        if texts == ["fails"]:
            raise MemoryError("no room for this part")
        if texts == ["last"]:
            release.wait(5)  # still computing when the failure is known
        ended.append(texts[0])
        return _vectors(texts)

    threads = PartThreads(lambda: None)
    timer = threading.Timer(0.2, release.set)  # raised before it ends, the test fails
    timer.start()
    with pytest.raises(MemoryError, match="no room for this part"):
        threads.compute(compute, [["first"], ["fails"], ["last"]], batch=4)
    assert sorted(ended) == ["first", "last"]
    timer.cancel()


def test_a_part_thread_whose_setup_fails_still_computes_its_parts() -> None:
    def setup() -> None:
        raise ImportError("no threadpoolctl")

    got = PartThreads(setup).compute(lambda texts, batch: _vectors(texts), [["a"], ["bb"]], 4)
    assert [v.ravel().tolist() for v in got] == [[1], [2]]


def test_without_a_thread_to_be_had_the_caller_computes_every_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start = threading.Thread.start

    def refused(thread: threading.Thread) -> None:
        if thread.name == "minilm-part":
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", refused)
    names: list[str] = []

    def compute(texts: list[str], batch: int) -> FloatArray:
        names.append(threading.current_thread().name)
        return _vectors(texts)

    got = PartThreads(lambda: None).compute(compute, [["a"], ["bb"], ["ccc"]], batch=4)
    assert [v.ravel().tolist() for v in got] == [[1], [2], [3]]
    assert names == ["MainThread"] * 3


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_cgroup_cpu_quota_bounds_the_cores_v2_v1_and_their_parents(tmp_path: Path) -> None:
    """A container's `--cpus 1.5` is 2 cores' worth of parts, not the host's 64: parts past
    the quota would only be throttled. The least of the cgroup's and its parents' counts."""
    membership = tmp_path / "cgroup"
    root = tmp_path / "fs"
    membership.write_text("0::/app/job\n")
    _tree(root, {"app/job/cpu.max": "max 100000\n", "app/cpu.max": "150000 100000\n"})
    assert parts.quota_cores(membership, root) == 2
    _tree(root, {"cpu.max": "100000 100000\n"})  # the namespace's root: a container's own
    assert parts.quota_cores(membership, root) == 1
    membership.write_text("4:memory:/x\n3:cpu,cpuacct:/docker/abc\n")  # v1: its cpu mount
    _tree(
        root,
        {
            "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000\n",
            "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
            "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        },
    )
    assert parts.quota_cores(membership, root) == 3


@pytest.mark.parametrize(
    ("membership", "files"),
    [
        (None, {}),  # no /proc (not Linux)
        (b"\xff\xfe0::/\n", {"cpu.max": "100000 100000\n"}),  # not UTF-8
        ("0::/\n", {}),  # no controller files
        ("0::/\n", {"cpu.max": "max 100000\n"}),  # no quota
        ("0::/\n", {"cpu.max": "garbage\n"}),
        ("1:cpu:/\n", {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}),
        ("1:cpu:/\n", {"cpu/cpu.cfs_quota_us": "5", "cpu/cpu.cfs_period_us": "0"}),
        ("not a cgroup line\n", {"cpu.max": "100000 100000\n"}),
        ("3::/x\n", {"x/cpu.max": "100000 100000\n"}),  # no v2 line: v1's id, no controller
    ],
)
def test_no_quota_or_one_that_cannot_be_read_leaves_the_cores_as_they_are(
    tmp_path: Path, membership: str | bytes | None, files: dict[str, str]
) -> None:
    path = tmp_path / "cgroup"
    if isinstance(membership, bytes):
        path.write_bytes(membership)
    elif membership is not None:
        path.write_text(membership)
    root = tmp_path / "fs"
    root.mkdir()
    _tree(root, files)
    assert parts.quota_cores(path, root) == parts.NO_QUOTA
    assert 1 <= parts.cores() <= (os.cpu_count() or 1)


def test_the_cores_are_the_fewer_of_the_allowed_cpus_and_the_quota(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(parts, "_quota", lambda: 3)
    assert parts.cores() == 3
    monkeypatch.setattr(parts, "_quota", lambda: parts.NO_QUOTA)
    assert parts.cores() == 8
