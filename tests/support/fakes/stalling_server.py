"""A TCP server that takes connections and never finishes an answer (a hung memory server).

`silent`: accepts, reads the request, says nothing. `trickle`: answers `HTTP/1.1 200 OK`
with `Content-Length: 1000000`, then one byte a second, so no read ever waits long enough
for a per-read timeout to fire. `postgres`: a PostgreSQL server that completes the start-up
(refuses TLS, then AuthenticationOk, ParameterStatus, BackendKeyData, ReadyForQuery) and
then never answers a query, so only a client's own deadline ends the wait. Each connection
is served by its own daemon thread; closing the server stops them all.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from types import TracebackType
from typing import Literal

Mode = Literal["silent", "trickle", "postgres"]
TRICKLE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
)
# What a client sends before its StartupMessage to ask for TLS or GSS encryption (refused
# with one `N`), or to cancel a query on another connection (ignored: it just closes).
PG_ENCRYPTION_REQUESTS = (80877103, 80877104)
PG_CANCEL_REQUEST = 80877102
PG_PARAMETERS = {
    "server_version": "15.0",
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "DateStyle": "ISO, MDY",
    "integer_datetimes": "on",
    "standard_conforming_strings": "on",
    "TimeZone": "UTC",
}
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
                if self.mode != "postgres":
                    conn.recv(65536)
                elif not _postgres_startup(conn):  # a cancel request: ignored
                    return
                if self.mode == "trickle":
                    conn.sendall(TRICKLE_HEAD)
                for _ in range(1_000_000):  # bounded like the body it promises
                    if self._stop.wait(1.0):
                        return
                    if self.mode == "trickle":
                        conn.sendall(b" ")
            except OSError:  # the client gave up: what it should do
                return


def _message(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!I", len(body) + 4) + body


def _read_packet(conn: socket.socket) -> tuple[int, bytes]:
    """A start-up packet: its code (protocol version or request) and the rest."""
    head = _read_exactly(conn, 8)
    length, code = struct.unpack("!II", head)
    return code, _read_exactly(conn, min(max(length - 8, 0), 1 << 16))


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the client closed")
        data += chunk
    return data


def _postgres_startup(conn: socket.socket) -> bool:
    """Answer a PostgreSQL client's start-up as a server that trusts it; False for a cancel."""
    conn.settimeout(10.0)
    code, _ = _read_packet(conn)
    while code in PG_ENCRYPTION_REQUESTS:
        conn.sendall(b"N")
        code, _ = _read_packet(conn)
    if code == PG_CANCEL_REQUEST:
        return False
    reply = _message(b"R", struct.pack("!I", 0))  # AuthenticationOk
    for name, value in PG_PARAMETERS.items():
        reply += _message(b"S", name.encode() + b"\0" + value.encode() + b"\0")
    reply += _message(b"K", struct.pack("!II", 4242, 2424))  # BackendKeyData
    reply += _message(b"Z", b"I")  # ReadyForQuery, idle
    conn.sendall(reply)
    return True


class FreezingProxy:
    """A TCP proxy to `127.0.0.1:upstream` that stops passing bytes on `freeze()`: a server
    that answered and then went silent mid-conversation. `thaw()` drops the connections it
    froze (their state is unknown, as a client that gave up on them knows) and passes bytes
    on new ones again."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.frozen = threading.Event()
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> FreezingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()
        self._drop()

    def freeze(self) -> None:
        self.frozen.set()

    def thaw(self) -> None:
        self._drop()
        self.frozen.clear()

    def _drop(self) -> None:
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._sockets.clear()

    def _accept(self) -> None:
        for _ in range(MAX_CONNECTIONS):
            if self._stop.is_set():
                return
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream), timeout=10)
            self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        source.settimeout(None)
        try:
            while chunk := source.recv(65536):
                while self.frozen.is_set() and not self._stop.is_set():
                    self._stop.wait(0.1)  # held, never passed on: the peer hears nothing
                if self._stop.is_set():
                    return
                sink.sendall(chunk)
        except OSError:
            return
