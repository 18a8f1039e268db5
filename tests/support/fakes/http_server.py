"""Run an ``aiohttp`` application on 127.0.0.1 in a background thread.

Example::

    with BackgroundServer(app) as srv:
        requests.get(srv.url + "/ping")
"""

from __future__ import annotations

import asyncio
import threading
from typing import Self

from aiohttp import web


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
