"""Who may talk to the server at all, checked before any route: plain ASGI, for every path.

Without a token the server is this machine's alone, whatever address it was bound to (a
user who starts it with `aegra serve --host 0.0.0.0` rather than the launcher still gets
403 from anywhere else). `/mcp` is a plain Starlette route that the server's auth hook
does not reach, so `BearerRequired` checks the same token in front of it.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from deep_research.config.agent_server import TOKEN_ENV, is_loopback, server_token
from deep_research.server.auth import UNAUTHORIZED, authorized

LOOPBACK_ONLY = f"this server answers only loopback clients until {TOKEN_ENV} is set"


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
            client = scope.get("client")
            if client is None or not is_loopback(str(client[0])):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await refuse(send, 403, LOOPBACK_ONLY)
                return
        await self.app(scope, receive, send)


class BearerRequired:
    """401 for a request without the server's bearer token (any request, without one)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            values = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
            authorization = values[0].decode("latin-1") if len(values) == 1 else None
            if not authorized(authorization):
                await refuse(send, 401, UNAUTHORIZED)
                return
        await self.app(scope, receive, send)
