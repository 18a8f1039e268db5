"""cli.interrupt: Ctrl-C stops a run at once and unwinds it; the exit waits for no thread."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest

from deep_research.cli import interrupt
from deep_research.cli.interrupt import exit_now, run_until_interrupted


def _ctrl_c_after(seconds: float) -> None:
    asyncio.get_running_loop().call_later(seconds, os.kill, os.getpid(), signal.SIGINT)


def test_a_run_that_ends_returns_its_result_and_closes_like_asyncio_run() -> None:
    stops: list[str] = []

    async def main() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_until_interrupted(main(), lambda: stops.append("stop")) == 42
    assert stops == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler removed


def test_a_run_that_fails_raises_its_own_error() -> None:
    async def main() -> None:
        raise LookupError("no such thread")

    with pytest.raises(LookupError, match="no such thread"):
        run_until_interrupted(main(), lambda: None)


def test_ctrl_c_says_stop_at_once_then_unwinds_the_run() -> None:
    events: list[str] = []

    async def main() -> None:
        _ctrl_c_after(0.05)
        try:
            await asyncio.sleep(30)
        finally:
            events.append("unwound")  # where the traffic log and checkpointer close

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_until_interrupted(main(), lambda: events.append("stopping…"))
    assert events == ["stopping…", "unwound"]
    assert time.monotonic() - started < 5


def test_a_second_ctrl_c_does_not_wait_for_a_run_that_will_not_unwind() -> None:
    stops: list[float] = []

    async def main() -> None:
        _ctrl_c_after(0.05)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            _ctrl_c_after(0.05)
            await asyncio.sleep(30)  # a stubborn cleanup

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_until_interrupted(main(), lambda: stops.append(time.monotonic()))
    assert len(stops) == 1 and time.monotonic() - started < 5


class _Exited(Exception):
    pass


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """`os._exit` recorded instead of ending the test process."""
    codes: list[int] = []

    def record(code: int) -> None:
        codes.append(code)
        raise _Exited

    monkeypatch.setattr(interrupt.os, "_exit", record)
    return codes


def test_exit_now_gives_last_its_words_then_exits_with_the_code(exits: list[int]) -> None:
    said: list[str] = []
    with pytest.raises(_Exited):
        exit_now(130, lambda: said.append("flushed"))
    assert said == ["flushed"] and exits == [130]


def test_a_slow_last_cannot_hold_the_exit(exits: list[int]) -> None:
    release = threading.Event()
    started = time.monotonic()

    def flush_to_an_unreachable_endpoint() -> None:
        release.wait(30)

    with pytest.raises(_Exited):
        exit_now(1, flush_to_an_unreachable_endpoint, grace=0.1)
    assert exits == [1] and time.monotonic() - started < 2
    release.set()
