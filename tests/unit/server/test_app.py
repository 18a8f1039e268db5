"""The custom app Aegra is built on: `/mcp` behind the token, the loopback guard outside."""

from __future__ import annotations

import importlib

import pytest
from fastapi import FastAPI
from starlette.routing import Route

from deep_research.config.agent_server import TOKEN_ENV
from deep_research.server import app as server_app
from deep_research.server.guard import BearerRequired, LoopbackOnly


def test_the_app_is_fastapi_with_mcp_behind_the_token() -> None:
    app = server_app.build_app()
    assert isinstance(app, FastAPI)  # Aegra refuses any other custom app
    [route] = [r for r in app.routes if isinstance(r, Route) and r.path == "/mcp"]
    assert isinstance(route.endpoint, BearerRequired)
    assert any(m.cls is LoopbackOnly for m in app.user_middleware)
    # Only /mcp of the app's own: FastAPI's /docs, /redoc and /openapi.json would answer
    # without the token, since Aegra's auth hook guards only its own routes.
    assert [getattr(r, "path", None) for r in app.routes] == ["/mcp"]


@pytest.mark.parametrize("token", [None, "secret-token-0123456789"])
def test_the_mcp_host_check_is_on_until_a_token_guards_it(
    token: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if token is None:
        monkeypatch.delenv(TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(TOKEN_ENV, token)
    transport = server_app.mcp_transport()
    manager = server_app.mcp_server._lowlevel_server._session_manager
    security = manager.security_settings
    assert transport.routes
    if token is None:
        assert security is not None and security.enable_dns_rebinding_protection
        assert security.allowed_hosts == ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    else:
        assert security is not None and not security.enable_dns_rebinding_protection


def test_importing_the_app_module_builds_one_app() -> None:
    module = importlib.reload(server_app)
    assert isinstance(module.app, FastAPI)
