"""The model endpoint's HTTP clients: built once, shared within an event loop, never across."""

from __future__ import annotations

import asyncio
import gc
import re
import socket
import ssl
import threading
import time
import weakref
from typing import Any

import httpx
import openai
import pytest

from deep_research.config.settings import Context
from deep_research.llm.models import role_model
from deep_research.runtime import http as http_clients
from deep_research.runtime import process
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.langgraph_dev import free_port
from tests.support.tls import count_ca_bundle_reads


def _answer(body: dict[str, Any]) -> str:
    return "ok"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    with ScriptedOpenAIServer(_answer) as running:
        monkeypatch.setenv("LLM_BASE_URL", running.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("LLM_MODEL", "test-model")
        yield running


async def _two_calls() -> None:
    for role in ("researcher", "orchestrator"):  # a model built per call, as nodes do
        reply = await role_model(Context(), role).model.ainvoke("hello")
        assert reply.text == "ok"


def test_calls_on_one_loop_share_a_connection_and_the_next_loop_opens_its_own(
    server: ScriptedOpenAIServer,
) -> None:
    asyncio.run(_two_calls())
    # A notebook's or the CLI's next run: a new loop, whose calls must not meet the
    # closed loop's connection ("Event loop is closed").
    asyncio.run(_two_calls())
    first, second, third, fourth = server.client_ports
    assert first == second and third == fourth, "one keep-alive connection per loop"
    assert first != third


async def test_building_a_model_reads_no_ca_bundle(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    role_model(Context(), "researcher")  # the loop's clients, and the process's TLS context
    loads = count_ca_bundle_reads(monkeypatch)
    models = [role_model(Context(), role) for role in ("researcher", "orchestrator", "clarifier")]
    assert loads == [], "each model built read the CA bundle again (about 30 ms per client)"
    clients = {id(m.model.http_async_client) for m in models}  # type: ignore[attr-defined]
    assert len(clients) == 1


async def test_the_shared_client_verifies_with_the_process_tls_context(
    server: ScriptedOpenAIServer,
) -> None:
    client = role_model(Context(), "researcher").model.http_async_client  # type: ignore[attr-defined]
    context = client._transport._pool._ssl_context
    assert context is http_clients.tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_a_finished_loop_and_its_connections_are_let_go(server: ScriptedOpenAIServer) -> None:
    # The pool's sockets refer to their loop, so a loop kept as a key of a weak dictionary
    # by its own client never went: each `asyncio.run` (a notebook cell, a server's
    # isolated job loop) left its loop and an open connection behind for good.
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def run() -> None:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        await _two_calls()

    for _ in range(3):
        asyncio.run(run())
    gc.collect()
    assert [ref() is None for ref in loops[:2]] == [True, True]
    assert len(http_clients._by_loop) <= 1


def test_the_first_request_is_said_sent_once_it_is_written_not_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Background work (the collector's first pass, chromadb's import) waits for the first
    model request to be on the wire (runtime/process.py): the endpoint's client says so when
    the request is written, and not for a request that never reached a server."""
    monkeypatch.setattr(process, "_model_request_sent", threading.Event())
    monkeypatch.setattr(process, "_model_call_began", threading.Event())  # it sets both
    seen_by_server: list[bool] = []

    def answer(body: dict[str, Any]) -> str:
        # The client says so as it starts waiting for the reply; the server may read the
        # request a moment before: it waits for that, up to a bound.
        deadline = time.monotonic() + 5
        while not process.model_request_was_sent() and time.monotonic() < deadline:
            time.sleep(0.005)
        seen_by_server.append(process.model_request_was_sent())
        return "ok"

    async def refused() -> None:
        with pytest.raises(openai.APIConnectionError):
            await role_model(Context(), "researcher").model.ainvoke("hello")

    monkeypatch.setenv("LLM_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    asyncio.run(refused())
    assert not process.model_request_was_sent(), "a request that reached no server was not sent"
    with ScriptedOpenAIServer(answer) as running:
        monkeypatch.setenv("LLM_BASE_URL", running.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("LLM_MODEL", "test-model")
        asyncio.run(_two_calls())
    assert seen_by_server == [True, True]


class _SlowReader:
    """A bare HTTP server on 127.0.0.1 that reads a request's head, then waits `pause`
    seconds before reading its body, so a large body is still being written meanwhile."""

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self.sent_while_reading: list[bool] = []  # the flag during the pause, then after
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        connection, _ = self._listener.accept()
        with connection, self._listener:
            data = b""
            while b"\r\n\r\n" not in data:
                data += connection.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
            time.sleep(self.pause)
            self.sent_while_reading.append(process.model_request_was_sent())
            while len(body) < length:
                body += connection.recv(1 << 20)
            time.sleep(0.2)  # the client's last write returns, and says so
            self.sent_while_reading.append(process.model_request_was_sent())
            connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")

    def join(self) -> None:
        self._thread.join(10)


def test_a_request_whose_body_is_still_being_written_is_not_said_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """8 MB of prompt cannot all go into the socket while the server reads none of it: the
    request is said to be on the wire only once its last byte is written."""
    monkeypatch.setattr(process, "_model_request_sent", threading.Event())
    monkeypatch.setattr(process, "_model_call_began", threading.Event())  # it sets both
    server = _SlowReader(pause=0.5)

    async def send() -> None:
        client = http_clients.model_clients(httpx.Timeout(10.0))[1]
        prompt = "x" * 8_000_000
        await client.post(f"http://127.0.0.1:{server.port}/v1/chat/completions", json={"p": prompt})

    asyncio.run(send())
    server.join()
    assert server.sent_while_reading == [False, True]


def test_a_proxy_tunnel_s_connect_is_not_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind an HTTPS proxy the client first sends CONNECT, with the request's extensions:
    a proxy that answers it and hangs up got no model request, and none is said sent."""
    monkeypatch.setattr(process, "_model_request_sent", threading.Event())
    monkeypatch.setattr(process, "_model_call_began", threading.Event())  # it sets both
    asked: list[bytes] = []

    async def main() -> None:
        async def tunnel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            asked.append(await reader.readline())
            while await reader.readline() not in (b"\r\n", b""):
                pass
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            writer.close()  # no TLS, no request: the tunnel goes nowhere

        proxy = await asyncio.start_server(tunnel, "127.0.0.1", 0)
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.sockets[0].getsockname()[1]}")
        monkeypatch.setenv("LLM_BASE_URL", "https://api.example.test/v1")
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        with pytest.raises(openai.APIConnectionError):  # this loop's client: made with the proxy
            await role_model(Context(), "researcher").model.ainvoke("hello")
        proxy.close()

    asyncio.run(main())
    assert asked and asked[0].startswith(b"CONNECT api.example.test:443")
    assert not process.model_request_was_sent()
