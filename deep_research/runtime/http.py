"""HTTP clients for the model endpoint: one TLS context per process, one pool per loop.

Every model call builds its chat model afresh (the context may change between runs), and
a `ChatOpenAI` given a timeout of its own makes two httpx clients, each reading the CA
bundle: about 55 ms of event-loop time per call, paid K times in a row when K researchers
start together. Here the TLS context is built once and the clients are shared: the sync
one by the process (it is thread-safe, and our nodes never use it), the async one by
everything that runs on one event loop, so its connections are reused and never cross
into another loop (a notebook's or a test's next `asyncio.run`). The page fetcher's
transport uses the same TLS context (`search/netguard.py`).

The async clients also say when the process's first model request is on the wire
(`process.model_request_sent`): background work waits for that, not for the call to begin.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import os
import ssl
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import openai

from deep_research.runtime import process

_Key = tuple[float | None, float | None, float | None, float | None]
_by_loop: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[_Key, openai.DefaultAsyncHttpxClient]
]
_by_loop = weakref.WeakKeyDictionary()
_lock = threading.Lock()


# What a process's first chat request imports (openai's chat resources, its HTTP client's
# transport: 30 ms), imported with this module instead, so that the first run does not wait
# for it before its first request goes out (docs/speed.md). Should a later openai move them,
# they are imported as before, when first used.
for _module in ("openai.resources.chat.chat", "httpcore2"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_module)
del _module

_tls_lock = threading.Lock()  # held by whoever is building the context
_tls_started = threading.Lock()  # taken by the one `prepare_tls` that starts its thread


def tls_context() -> ssl.SSLContext:
    """httpx's default verification, built once per process: certifi's CA bundle, or the
    one SSL_CERT_FILE / SSL_CERT_DIR name (a company's TLS-inspecting gateway). A build
    under way on `prepare_tls`'s thread is waited for, not repeated (unless it failed:
    this call then builds it and raises what went wrong)."""
    with _tls_lock:
        return _built_tls_context()


@functools.cache
def _built_tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


def prepare_tls() -> None:
    """Build the TLS context on a daemon thread, once per process (as its first run
    starts): reading the CA bundle took 50-90 ms of the first model call's time before its
    request went out, and lets go of the interpreter as it reads, so the run's first steps
    go on meanwhile (docs/speed.md). The thread takes the lock itself: a client that asks
    before it has builds the context as before, one that asks after waits for it."""
    if _built_tls_context.cache_info().currsize or not _tls_started.acquire(blocking=False):
        return
    with contextlib.suppress(RuntimeError):  # no thread to be had: clients build it
        threading.Thread(target=_build_tls, name="tls-context", daemon=True).start()


def _build_tls() -> None:
    with _tls_lock, contextlib.suppress(OSError):  # unreadable: the client that needs it says why
        _built_tls_context()


def _free_tls_lock() -> None:
    """In a child forked while the context was being built: no thread there will finish."""
    if _tls_lock.locked():
        _tls_lock.release()


os.register_at_fork(after_in_child=_free_tls_lock)


def _key(timeout: httpx.Timeout) -> _Key:
    return (timeout.connect, timeout.read, timeout.write, timeout.pool)


@functools.cache
def _sync_client(key: _Key) -> openai.DefaultHttpxClient:
    return openai.DefaultHttpxClient(timeout=key, verify=tls_context())


def _async_client(key: _Key) -> openai.DefaultAsyncHttpxClient:
    hooks = {"request": [_watch_until_sent]}
    return openai.DefaultAsyncHttpxClient(timeout=key, verify=tls_context(), event_hooks=hooks)


async def _watch_until_sent(request: Any) -> None:  # openai's httpx fork's Request
    """Until a model request has been written, each one is traced (httpcore's `trace`
    extension, beside any trace already asked for) to see when it is."""
    if not process.model_request_was_sent():
        request.extensions = {**request.extensions, "trace": _tracer(request.extensions)}


def _tracer(extensions: Any) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    """A trace that says when its request's body is written whole: not a proxy tunnel's
    CONNECT, which httpcore sends first with the same extensions."""
    earlier = extensions.get("trace")
    writing = False

    async def trace(event: str, info: dict[str, Any]) -> None:
        nonlocal writing
        if event.endswith("send_request_body.started"):
            writing = getattr(info.get("request"), "method", b"") != b"CONNECT"
        elif event.endswith("send_request_body.complete") and writing:
            process.model_request_sent()
        if earlier is not None:
            await earlier(event, info)

    return trace


def model_clients(
    timeout: httpx.Timeout,
) -> tuple[openai.DefaultHttpxClient, openai.DefaultAsyncHttpxClient]:
    """The sync and async clients for a model with `timeout`, openai's own kind (its
    connection limits, redirects followed, proxies from the environment)."""
    key = _key(timeout)  # as four numbers: openai's clients are not httpx's
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # built outside a loop: its own client, for whichever loop uses it
        return _sync_client(key), _async_client(key)
    with _lock:
        # A client's pooled sockets refer to their loop, so a closed loop stays a key of
        # this weak dictionary until dropped here: it, its client and its connections go
        # with the next garbage collection (each `asyncio.run`'s, a server's job loops).
        for closed in [old for old in _by_loop if old.is_closed()]:
            del _by_loop[closed]
        clients = _by_loop.setdefault(loop, {})
        if key not in clients:
            clients[key] = _async_client(key)
        return _sync_client(key), clients[key]
