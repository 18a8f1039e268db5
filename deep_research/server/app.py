"""The custom HTTP app `aegra.json` mounts: the project's `/mcp`, guarded, as a FastAPI app.

Aegra builds its server on the custom app (it must be FastAPI) and runs that app's
lifespan inside its own, so the MCP session manager starts after the database and Redis.
The MCP server is the one `langgraph dev` serves (`deep_research.mcp`); only its HTTP
transport differs: behind a token its DNS-rebinding check (Host must be loopback) would
refuse every caller on another machine, and the token is what protects it then.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from deep_research.config.agent_server import server_token
from deep_research.mcp.app import server as mcp_server
from deep_research.server.guard import BearerRequired, LoopbackOnly
from deep_research.text.secrets import redact_log_records

MCP_PATH = "/mcp"


def mcp_transport() -> Starlette:
    """The MCP server's HTTP app: Host checked (as today) without a token, not behind one."""
    security = None  # the SDK's default for 127.0.0.1: Host and Origin must be loopback
    if server_token() is not None:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return mcp_server.streamable_http_app(stateless_http=True, transport_security=security)


def build_app() -> FastAPI:
    """A FastAPI app with `/mcp` behind the token and every route behind the loopback rule."""
    redact_log_records()  # served by `aegra serve` too, not only by our launcher
    transport = mcp_transport()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with transport.router.lifespan_context(transport):  # the session manager
            yield

    # No /docs, /redoc or /openapi.json of the app's own: they would answer without the token.
    app = FastAPI(
        title="deep_research", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    [route] = [r for r in transport.routes if isinstance(r, Route) and r.path == MCP_PATH]
    app.router.routes.append(Route(MCP_PATH, endpoint=BearerRequired(route.endpoint)))
    app.add_middleware(LoopbackOnly)
    return app


app = build_app()
