"""The model endpoint's HTTP clients, without a server: one TLS context, one sync client per
timeout, one async client per loop and timeout, closed loops let go. (Real connections and
CA-bundle reads: tests/integration/test_model_clients.py.)"""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deep_research.runtime import http
from deep_research.runtime.http import model_clients, tls_context
from tests.support.cli import fresh_python

SHORT, LONG = httpx.Timeout(5.0), httpx.Timeout(60.0, connect=3.0)


def fields(timeout: Any) -> tuple[float | None, ...]:
    return (timeout.connect, timeout.read, timeout.write, timeout.pool)


def test_the_tls_context_is_built_once_and_verifies() -> None:
    assert tls_context() is tls_context()
    assert tls_context().verify_mode == ssl.CERT_REQUIRED


def test_outside_a_loop_the_sync_client_is_shared_and_the_async_one_is_its_own() -> None:
    (sync_a, async_a), (sync_b, async_b) = model_clients(SHORT), model_clients(SHORT)
    assert sync_a is sync_b and async_a is not async_b
    assert model_clients(LONG)[0] is not sync_a
    # As four numbers: openai's clients have a Timeout class of their own.
    assert fields(sync_a.timeout) == fields(SHORT)
    assert fields(model_clients(LONG)[0].timeout) == fields(LONG)
    assert fields(model_clients(LONG)[1].timeout) == fields(LONG)


def test_on_one_loop_the_async_client_is_shared_per_timeout() -> None:
    async def clients() -> tuple[object, object, object]:
        return model_clients(SHORT)[1], model_clients(SHORT)[1], model_clients(LONG)[1]

    one, two = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        first, again, other = one.run_until_complete(clients())
        assert first is again and other is not first
        # Another open loop gets its own: pooled sockets belong to the loop that made them.
        assert two.run_until_complete(clients())[0] is not first
    finally:
        one.close()
        two.close()


def test_a_closed_loop_is_dropped_when_another_asks() -> None:
    async def ask() -> None:
        model_clients(SHORT)

    old = asyncio.new_event_loop()
    old.run_until_complete(ask())
    assert old in http._by_loop
    old.close()
    asyncio.run(ask())
    assert old not in http._by_loop


async def test_a_trace_asked_for_before_is_kept(monkeypatch: Any) -> None:
    """The request's own `trace` (a caller's, or httpx's debugging) still sees every event."""
    import threading
    from types import SimpleNamespace

    from deep_research.runtime import process

    monkeypatch.setattr(process, "_model_request_sent", threading.Event())
    monkeypatch.setattr(process, "_model_call_began", threading.Event())  # it sets both
    seen: list[str] = []

    async def earlier(event: str, info: dict[str, Any]) -> None:
        seen.append(event)

    trace = http._tracer({"trace": earlier})
    await trace("http11.send_request_body.started", {"request": SimpleNamespace(method=b"POST")})
    assert not process.model_request_was_sent(), "started is not written"
    await trace("http11.send_request_body.complete", {"return_value": None})
    assert process.model_request_was_sent()
    assert seen == ["http11.send_request_body.started", "http11.send_request_body.complete"]


@pytest.fixture
def fresh_tls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """A process that has neither built the TLS context nor started its thread; what its
    threads raised uncaught (a traceback on the terminal) is listed."""
    monkeypatch.setattr(http, "_tls_lock", threading.Lock())
    monkeypatch.setattr(http, "_tls_started", threading.Lock())
    uncaught: list[object] = []
    monkeypatch.setattr(threading, "excepthook", uncaught.append)
    http._built_tls_context.cache_clear()
    yield uncaught
    for thread in [t for t in threading.enumerate() if t.name == "tls-context"]:
        thread.join(5)
    http._built_tls_context.cache_clear()


def test_the_tls_context_is_built_once_on_the_first_runs_thread_and_waited_for(
    monkeypatch: pytest.MonkeyPatch, fresh_tls: list[object]
) -> None:
    built: list[str] = []
    release = threading.Event()

    def slow_bundle() -> ssl.SSLContext:
        built.append(threading.current_thread().name)
        release.wait(5)
        return ssl.create_default_context()

    monkeypatch.setattr(httpx, "create_ssl_context", slow_bundle)
    try:
        http.prepare_tls()
        http.prepare_tls()  # under way: not started again
        deadline = time.monotonic() + 5
        while not built and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [t.name for t in threading.enumerate()].count("tls-context") == 1
        assert built == ["tls-context"]
        waited: list[ssl.SSLContext] = []
        client = threading.Thread(target=lambda: waited.append(tls_context()))
        client.start()
        client.join(0.2)
        assert client.is_alive(), "a client asking meanwhile waits for the build"
        release.set()
        client.join(5)
        assert built == ["tls-context"] and waited == [tls_context()]
        http.prepare_tls()  # built: nothing more
        assert built == ["tls-context"] and fresh_tls == []
    finally:
        release.set()


def test_a_bundle_that_cannot_be_read_on_the_thread_is_said_by_the_client_that_needs_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_tls: list[object]
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    http.prepare_tls()
    for thread in [t for t in threading.enumerate() if t.name == "tls-context"]:
        thread.join(5)
    assert not http._tls_lock.locked(), "the lock is given back after a failed build"
    assert fresh_tls == [], "no traceback on the terminal from the thread"
    with pytest.raises(OSError):
        tls_context()


def test_the_first_requests_imports_come_with_the_module_and_a_fork_frees_the_build() -> None:
    code = (
        "import os, signal, sys\n"
        "from deep_research.runtime import http\n"
        "imported = {'openai.resources.chat.chat', 'httpcore2'} <= set(sys.modules)\n"
        "http._tls_lock.acquire()  # a build under way on a thread the child will not have\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    signal.alarm(10)  # a lock nobody will give back: killed, not hung\n"
        "    os._exit(0 if http.tls_context() is not None else 1)\n"
        "_, status = os.waitpid(child, 0)\n"
        "print(imported, os.waitstatus_to_exitcode(status))\n"
    )
    assert fresh_python(code) == "True 0"


class Unstarted:
    """A thread that is never started, or cannot be."""

    made: list[str] = []
    refuse: BaseException | None = None

    def __init__(self, *, target: object, name: str, daemon: bool) -> None:
        Unstarted.made.append(name)

    def start(self) -> None:
        if Unstarted.refuse is not None:
            raise Unstarted.refuse


class Interrupted(BaseException):
    """Ctrl-C's kind: not an Exception (pytest would stop at a real KeyboardInterrupt)."""


@pytest.mark.parametrize("refused", [None, RuntimeError("can't start new thread"), Interrupted()])
def test_one_thread_is_started_and_a_client_never_waits_on_one_that_did_not_start(
    monkeypatch: pytest.MonkeyPatch, refused: BaseException | None, fresh_tls: list[object]
) -> None:
    monkeypatch.setattr(http.threading, "Thread", Unstarted)
    monkeypatch.setattr(Unstarted, "made", [])
    monkeypatch.setattr(Unstarted, "refuse", refused)
    for _ in range(2):  # the second: a thread started (not yet running) or none to be had
        try:
            http.prepare_tls()
        except Interrupted:
            assert isinstance(refused, Interrupted)
    assert Unstarted.made == ["tls-context"], "one thread, started once"
    assert not http._tls_lock.locked(), "a client would otherwise wait for ever"
    assert tls_context() is tls_context()


def test_ctrl_c_while_the_thread_starts_leaves_one_builder_and_a_working_lock(
    monkeypatch: pytest.MonkeyPatch, fresh_tls: list[object]
) -> None:
    # Ctrl-C (a notebook running the graph synchronously) lands while `start` waits for
    # the thread it has already started: that thread builds and gives the lock back alone.
    class StartedThenInterrupted(threading.Thread):
        def start(self) -> None:
            super().start()
            raise Interrupted

    monkeypatch.setattr(http.threading, "Thread", StartedThenInterrupted)
    with pytest.raises(Interrupted):
        http.prepare_tls()
    for thread in [t for t in threading.enumerate() if t.name == "tls-context"]:
        thread.join(5)
    assert fresh_tls == [], "the lock given back once, by its holder"
    assert not http._tls_lock.locked()
    assert tls_context() is tls_context()
