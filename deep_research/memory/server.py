"""A Chroma server's client with every request bounded: chromadb's own never gives up.

chromadb's `HttpClient` builds `httpx.Client(timeout=None)`: a server that accepts and never
answers, or sends `Content-Length: 1000000` and then a byte a second, holds a run for ever,
and httpx's timeouts alone (per read, no total) do not stop the trickle. So the server is
first asked for its heartbeat by a client of our own within `OPEN_SECONDS`, and the chromadb
client's session is then replaced by one whose transport gives each request a deadline kept
at the socket: every read and write waits at most what is left of it, whatever the byte rate.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import httpcore
import httpx

from deep_research.errors import DeepResearchError
from deep_research.memory import chroma

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.config import Settings

CONNECT_SECONDS = 3.0
READ_SECONDS = 20.0  # silence within one request: a big upsert is answered well within it
REQUEST_SECONDS = 60.0  # one whole request, headers and body
OPEN_SECONDS = 5.0  # the heartbeat before the store is used: a run waits at most this for it


class _Deadline(threading.local):
    """The deadline of the request the current thread is making (monotonic seconds)."""

    at: float = float("inf")

    def left(self, timeout: float | None) -> float:
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise httpcore.ReadTimeout("the Chroma server's request deadline passed")
        return remaining if timeout is None else min(timeout, remaining)


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._stream.start_tls(ssl_context, server_hostname, self._deadline.left(timeout))
        return _BoundedStream(stream, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    def __init__(self, deadline: _Deadline) -> None:
        self._backend = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, self._deadline.left(timeout), local_address, socket_options
        )
        return _BoundedStream(stream, self._deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_unix_socket(path, self._deadline.left(timeout))
        return _BoundedStream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def tls_for(url: str) -> ssl.SSLContext:
    """The TLS context for a Chroma server at `url`: httpx's default (the CA bundle read,
    20 ms) for an https:// one (CHROMA_HOST may name one); for plain HTTP (the shared
    memory's server on 127.0.0.1) one that knows no authority, so a TLS connection made with
    it would fail, and that reads nothing: every session has a transport and every
    transport a pool, which read the bundle four times for each store opened."""
    if httpx.URL(url).scheme == "https":
        return httpx.create_ssl_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, and trusts no certificate


class BoundedTransport(httpx.HTTPTransport):
    """httpx's transport, each request cut off `seconds` after it starts."""

    def __init__(
        self, seconds: float, context: ssl.SSLContext, limits: httpx.Limits | None = None
    ) -> None:
        limits = limits or httpx.Limits()
        super().__init__(verify=context, limits=limits)
        self._seconds = seconds
        self._deadline = _Deadline()
        # httpx takes no network backend; its pool is replaced by the same pool on ours.
        self._pool = httpcore.ConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_BoundedBackend(self._deadline),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # The body is read after this returns, on this thread, before its next request.
        self._deadline.at = time.monotonic() + self._seconds
        return super().handle_request(request)


def bounded_session(seconds: float, url: str, limits: httpx.Limits | None = None) -> httpx.Client:
    """A session for the Chroma server at `url`, each request cut off `seconds` after it
    starts."""
    timeout = httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS)
    # trust_env off: a proxy from the environment would bypass the bounded transport.
    transport = BoundedTransport(seconds, tls_for(url), limits)
    return httpx.Client(timeout=timeout, transport=transport, trust_env=False)


class ServerSilent(DeepResearchError, httpx.TimeoutException):
    """The server did not answer its heartbeat in time."""


def api_url(host: str, port: int) -> str:
    """The API's address of the Chroma server at host:port, as chromadb's client makes it
    (`host` may be a whole URL, https:// too)."""
    from chromadb.api.fastapi import FastAPI
    from chromadb.config import Settings

    return FastAPI.resolve_url(host, False, Settings().chroma_server_api_default_path, port)


def check_heartbeat(host: str, port: int) -> None:
    """Ask the server for its heartbeat within `OPEN_SECONDS`; httpx's error if it fails."""
    url = api_url(host, port)
    with bounded_session(OPEN_SECONDS, url) as http:
        try:
            http.get(f"{url}/heartbeat").raise_for_status()
        except httpx.TimeoutException:
            raise ServerSilent(f"it did not answer within {OPEN_SECONDS:.0f} s") from None


def with_token(settings: Settings, token: str) -> Settings:
    """`settings` that send `token` with every request (chromadb's token authentication)."""
    update = {
        "chroma_client_auth_provider": "chromadb.auth.token_authn.TokenAuthClientProvider",
        "chroma_client_auth_credentials": token,
    }
    return settings.model_copy(update=update)


def bounded_client(host: str, port: int, settings: Settings) -> ClientAPI:
    """chromadb's client for the server at host:port, its every request bounded."""
    chromadb = chroma.load()
    check_heartbeat(host, port)
    # Its constructor asks the server for its tenant and database unbounded: right after
    # a heartbeat, so only a server that falls silent in that instant can hold it.
    client = chromadb.HttpClient(host=host, port=port, settings=settings)
    server = getattr(client, "_server", None)
    old = getattr(server, "_session", None)
    if not isinstance(old, httpx.Client):
        raise TypeError("chromadb's client has no httpx session to bound")
    limits = getattr(server, "http_limits", None)
    get_url = getattr(server, "get_api_url", None)  # the address it resolved, as it sends
    url = str(get_url()) if callable(get_url) else api_url(host, port)
    session = bounded_session(REQUEST_SECONDS, url, limits)
    session.headers.update(old.headers)  # the client's identity and any auth headers
    setattr(server, "_session", session)  # noqa: B010  # chromadb offers no timeout setting
    old.close()
    return client
