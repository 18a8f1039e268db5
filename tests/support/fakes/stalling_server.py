"""A TCP server that takes connections and never finishes an answer (a hung memory server).

`silent`: accepts, reads the request, says nothing. `trickle`: answers `HTTP/1.1 200 OK`
with `Content-Length: 1000000`, then one byte a second, so no read ever waits long enough
for a per-read timeout to fire. Each connection is served by its own daemon thread; closing
the server stops them all.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Literal

Mode = Literal["silent", "trickle"]
TRICKLE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
)
MAX_CONNECTIONS = 1000  # a client retrying for ever still ends the accept loop


class StallingServer:
    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)  # so the accept loop sees `close()`
        self.port = int(self._listener.getsockname()[1])
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> StallingServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set() and self.connections < MAX_CONNECTIONS:
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(1.0)
            try:
                conn.recv(65536)
                if self.mode == "trickle":
                    conn.sendall(TRICKLE_HEAD)
                for _ in range(1_000_000):  # bounded like the body it promises
                    if self._stop.wait(1.0):
                        return
                    if self.mode == "trickle":
                        conn.sendall(b" ")
            except OSError:  # the client gave up: what it should do
                return
