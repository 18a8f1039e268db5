"""The guards in front of every route: loopback only without a token; the token on `/mcp`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deep_research.config.agent_server import TOKEN_ENV
from deep_research.server.guard import ALLOWED_ORIGINS, BearerRequired, LoopbackOnly

TOKEN = "secret-token-0123456789"


async def call(app: Any, client: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
    sent: list[dict[str, Any]] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "path": "/mcp", "client": (client, 5000), "headers": headers}
    await app(inner)(scope, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


@pytest.mark.parametrize("client", ["127.0.0.1", "::1", "127.0.0.2"])
async def test_loopback_peers_pass_without_a_token(
    client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert (await call(LoopbackOnly, client, []))[0] == 200


@pytest.mark.parametrize("client", ["192.0.2.7", "10.0.0.1", "2001:db8::1"])
async def test_other_peers_are_refused_without_a_token(
    client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    status, body = await call(LoopbackOnly, client, [])
    assert status == 403 and TOKEN_ENV in body["message"]


async def test_with_a_token_any_peer_reaches_the_auth_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert (await call(LoopbackOnly, "192.0.2.7", []))[0] == 200


async def test_mcp_needs_the_bearer_token_once_one_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    good = [(b"authorization", f"Bearer {TOKEN}".encode())]
    assert (await call(BearerRequired, "192.0.2.7", good))[0] == 200
    for headers in ([], [(b"authorization", b"Bearer wrong")], good + good):
        status, body = await call(BearerRequired, "127.0.0.1", headers)
        assert status == 401 and TOKEN not in json.dumps(body), headers
    monkeypatch.delenv(TOKEN_ENV)
    assert (await call(BearerRequired, "127.0.0.1", []))[0] == 200


async def test_a_websocket_from_elsewhere_is_closed_without_a_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    sent: list[dict[str, Any]] = []
    reached: list[bool] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "websocket", "path": "/x", "client": ("192.0.2.7", 1), "headers": []}
    await LoopbackOnly(inner)(scope, None, send)
    assert sent == [{"type": "websocket.close", "code": 1008}] and not reached


@pytest.mark.parametrize(
    "headers",
    [
        [(b"origin", b"https://evil.example")],
        [(b"origin", b"http://127.0.0.1.evil.example:2024")],
        [(b"origin", b"null")],
        [(b"host", b"evil.example:2024")],
        [(b"host", b"[::1")],
        [(b"host", b"127.0.0.1"), (b"host", b"evil.example")],
        [(b"origin", b"http://localhost:3000"), (b"origin", b"https://evil.example")],
    ],
    ids=[
        "foreign page",
        "look-alike",
        "opaque origin",
        "rebound name",
        "broken host",
        "two hosts",
        "two",
    ],
)
async def test_a_page_or_a_rebound_name_on_this_machine_is_refused_without_a_token(
    headers: list[tuple[bytes, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A browser connects from loopback: its Origin and Host tell a foreign page apart."""
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    status, body = await call(LoopbackOnly, "127.0.0.1", headers)
    assert status == 403 and TOKEN_ENV in body["message"]


@pytest.mark.parametrize(
    "headers",
    [
        [(b"host", b"127.0.0.1:2024")],
        [(b"host", b"localhost:2024"), (b"origin", b"http://localhost:3000")],
        [(b"host", b"[::1]:2024"), (b"origin", b"http://[::1]:2024")],
        [(b"host", b"127.0.0.1:2024"), (b"origin", b"https://smith.langchain.com")],
    ],
    ids=["sdk", "local page", "ipv6", "studio"],
)
async def test_this_machines_clients_and_studio_pass_without_a_token(
    headers: list[tuple[bytes, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert (await call(LoopbackOnly, "127.0.0.1", headers))[0] == 200


def test_the_servers_cors_allows_the_origins_the_guard_does() -> None:
    """aegra.json's CORS (Aegra's default is every origin) repeats ALLOWED_ORIGINS."""
    config = json.loads((Path(__file__).parents[3] / "aegra.json").read_text())
    assert config["http"]["cors"]["allow_origin_regex"] == ALLOWED_ORIGINS
    assert config["http"]["cors"]["allow_credentials"] is False
