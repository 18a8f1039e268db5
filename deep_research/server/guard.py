"""Who may talk to the server at all, checked before any route: plain ASGI, for every path.

Without a token the server is this machine's alone, whatever address it was bound to (a
user who starts it with `aegra serve --host 0.0.0.0` rather than the launcher still gets
403 from anywhere else). `/mcp` is a plain Starlette route that the server's auth hook
does not reach, so `BearerRequired` checks the same token in front of it.

A loopback peer is not enough on its own: a web page open in the user's browser connects
from 127.0.0.1 too, and a rebound DNS name reaches this port under its own Host. So without
a token a request must also name a loopback Host, and an Origin, when it sends one, must be
this machine's or LangGraph Studio's (`ALLOWED_ORIGINS`, which `aegra.json`'s CORS repeats).
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from deep_research.config.agent_server import TOKEN_ENV, is_loopback, server_token
from deep_research.server.auth import UNAUTHORIZED, authorized

LOOPBACK_ONLY = f"this server answers only loopback clients until {TOKEN_ENV} is set"
FOREIGN_PAGE = (
    f"this server answers only this machine's pages and LangGraph Studio until {TOKEN_ENV} is set"
)
# Browser origins that may call a server without a token: this machine's, and Studio's.
ALLOWED_ORIGINS = (
    r"^(https?://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?|https://smith\.langchain\.com)$"
)


def header(scope: Scope, name: bytes) -> str | None:
    """The request's one value of a header: None when absent or repeated."""
    values = [v for k, v in scope.get("headers", []) if k.lower() == name]
    return values[0].decode("latin-1") if len(values) == 1 else None


def repeated(scope: Scope, name: bytes) -> bool:
    return sum(1 for k, _ in scope.get("headers", []) if k.lower() == name) > 1


def from_this_machine(scope: Scope) -> bool:
    """A loopback peer, a loopback Host (or none) and an allowed Origin (or none)."""
    client = scope.get("client")
    if client is None or not is_loopback(str(client[0])):
        return False
    if repeated(scope, b"host") or repeated(scope, b"origin"):
        return False
    host, origin = header(scope, b"host"), header(scope, b"origin")
    if host is not None:
        try:
            name = urlsplit("//" + host).hostname
        except ValueError:  # "[::1", say: no host a browser would send
            return False
        if name is None or not is_loopback(name):
            return False
    return origin is None or re.match(ALLOWED_ORIGINS, origin) is not None


async def refuse(send: Send, status: int, message: str) -> None:
    """Answer with a JSON error in the Agent Protocol's shape (as the server's own 401s)."""
    kind = "unauthorized" if status == 401 else "forbidden"
    body = json.dumps({"error": kind, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class LoopbackOnly:
    """403 for every peer not on loopback while no token is configured."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and server_token() is None:
            if not from_this_machine(scope):
                client = scope.get("client")
                peer_ok = client is not None and is_loopback(str(client[0]))
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await refuse(send, 403, FOREIGN_PAGE if peer_ok else LOOPBACK_ONLY)
                return
        await self.app(scope, receive, send)


class BearerRequired:
    """401 for a request without the server's bearer token (any request, without one)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if not authorized(header(scope, b"authorization")):
                await refuse(send, 401, UNAUTHORIZED)
                return
        await self.app(scope, receive, send)
