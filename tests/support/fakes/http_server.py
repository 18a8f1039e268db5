"""Run an ``aiohttp`` application on 127.0.0.1 in a background thread.

Example::

    with BackgroundServer(app) as srv:
        requests.get(srv.url + "/ping")
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any, Self, TypeVar

from aiohttp import web

T = TypeVar("T")


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, read, released): a server that is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class BackgroundServer:
    """Serve ``app`` from a dedicated thread that owns its own event loop.

    The server binds an ephemeral port on 127.0.0.1; ``url`` is available once
    ``start()`` (or ``__enter__``) has returned. Fakes subclass it and pass their app.
    """

    def __init__(
        self,
        app: web.Application,
        *,
        host: str = "127.0.0.1",
        startup_timeout: float = 10.0,
        shutdown_timeout: float = 2.0,
    ) -> None:
        self._app = app
        self._host = host
        self._startup_timeout = startup_timeout
        self._shutdown_timeout = shutdown_timeout
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._port: int | None = None
        # What a fake keeps of the requests it served is written on the server's thread and
        # read on the test's: every log of every fake is guarded by this one lock.
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ properties
    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("server is not running")
        return self._port

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the application runs on (valid while running)."""
        if self._loop is None:
            raise RuntimeError("server is not running")
        return self._loop

    def _snapshot(self, log: list[T]) -> list[T]:
        """A copy of one of the fake's logs, taken under its lock."""
        with self._lock:
            return list(log)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        """Start serving; blocks until the socket is listening."""
        if self._thread is not None:
            raise RuntimeError("server already started")
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(
            target=self._thread_main, name="BackgroundServer", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(self._startup_timeout):
            raise RuntimeError("background server did not start in time")
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise RuntimeError("background server failed to start") from self._startup_error
        return self

    def stop(self) -> None:
        """Shut the server down and join its thread (idempotent)."""
        thread = self._thread
        if thread is None:
            return
        loop, stop_event = self._loop, self._stop_event
        if loop is not None and stop_event is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop_event.set)
            except RuntimeError:  # loop already closed
                pass
        thread.join()
        self._thread = None
        self._port = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ internals
    def _thread_main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # surfaced to start()
            if not self._ready.is_set():
                self._startup_error = exc
                self._ready.set()
            else:
                raise

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        runner = web.AppRunner(self._app, access_log=None, shutdown_timeout=self._shutdown_timeout)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self._host, 0, backlog=1024, reuse_address=True)
            await site.start()
            address = runner.addresses[0]
            self._port = int(address[1])
            self._ready.set()
            await self._stop_event.wait()
        finally:
            await runner.cleanup()
            self._loop = None
            self._stop_event = None


class JsonApiServer(BackgroundServer):
    """A fake JSON API: keeps each request's JSON body and its `Authorization` header."""

    def __init__(self, app: web.Application) -> None:
        super().__init__(app)
        self._requests: list[dict[str, Any]] = []
        self._auth_headers: list[str] = []

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot of all request bodies received so far, in arrival order."""
        return self._snapshot(self._requests)

    @property
    def auth_headers(self) -> list[str]:
        return self._snapshot(self._auth_headers)

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._auth_headers.clear()

    async def _receive(self, request: web.Request) -> dict[str, Any]:
        """The request's JSON body, kept with its `Authorization` header."""
        body: dict[str, Any] = await request.json()
        with self._lock:
            self._keep(body, request)
        return body

    def _keep(self, body: dict[str, Any], request: web.Request) -> None:
        """Log one request; the caller holds the lock (and may log more of it under it)."""
        self._requests.append(body)
        self._auth_headers.append(request.headers.get("Authorization", ""))
