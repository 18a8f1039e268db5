"""The model endpoint's HTTP clients: built once, shared within an event loop, never across."""

from __future__ import annotations

import asyncio
import gc
import ssl
import threading
import time
import weakref
from typing import Any

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
