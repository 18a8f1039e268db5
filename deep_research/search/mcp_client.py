"""One bounded exchange with an MCP server: list its tools, or call one.

Each exchange opens its own connection (a process over stdio, or a streamable HTTP session),
initializes, asks one thing and closes: a deadline covers all of it, and every byte read
from the server counts against `MAX_BYTES`. The SDK's stdio reader buffers a line without
limit, so stdio has its own transport here: lines read under the cap, the first line that
is not JSON-RPC ends the exchange, and the server's process group is killed on the way out.
The server inherits only the SDK's short list of harmless variables plus its file's `env`,
never this process's keys.

Every failure is an `McpCallError` with one of a few fixed phrasings: what a server says
in an error never reaches a model, a log or a report through here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from deep_research.config.mcp_servers import McpServer, header_values
from deep_research.config.names import ConfigError
from deep_research.errors import DeepResearchError

MAX_BYTES = 4_000_000  # read from a server in one exchange
LIST_DEADLINE = 20.0  # seconds: start, initialize, list
CALL_DEADLINE = 60.0  # seconds: start, initialize, call

NOT_STARTED = "the server could not be started or reached"
TIMED_OUT = "the server did not answer in time"
TOO_LARGE = "the server's answer was too large"
NOT_MCP = "the server's answer was not MCP"
CLOSED = "the server ended the exchange without an answer"
TOOL_FAILED = "the tool reported an error"
ANSWERED_ERROR = "the server answered with an error"  # a JSON-RPC error, its text unread


# The SDK's own failures (the connection closed, a stream ended, its own timeout), as it
# words them (mcp 2.x: shared/jsonrpc_dispatcher.py, client/streamable_http.py); any other
# MCPError is the server's answer, one with the same code too (-32000, JSON-RPC's "server
# error", is the SDK's CONNECTION_CLOSED). An SDK that words them otherwise makes a closed
# connection read as an error answer: tests/unit/search/test_mcp_client.py's dying servers.
_SDK_CODES = (types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT)
_SDK_WORDS = re.compile(r"Connection closed|SSE stream .*|Request '[^'\n]{0,200}' timed out", re.S)


class McpCallError(DeepResearchError):
    """An exchange with an MCP server failed; the message is one of the fixed phrasings."""


class _TooLarge(DeepResearchError):
    pass


class _NotMcp(DeepResearchError):
    pass


@dataclass(frozen=True)
class ListedTool:
    name: str
    description: str
    schema: dict[str, Any]


@dataclass
class _Budget:
    left: int = MAX_BYTES

    def take(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise _TooLarge


async def list_tools(server: McpServer, deadline: float = LIST_DEADLINE) -> list[ListedTool]:
    """The server's tools (its first page of them)."""

    async def ask(session: ClientSession) -> list[ListedTool]:
        listed = await session.list_tools()
        return [
            ListedTool(tool.name, tool.description or "", dict(tool.input_schema or {}))
            for tool in listed.tools
        ]

    return await _exchange(server, deadline, ask)


async def call_tool(
    server: McpServer, tool: str, arguments: dict[str, Any], deadline: float = CALL_DEADLINE
) -> str:
    """The text of one tool call's result (its text parts, or its structured content)."""

    async def ask(session: ClientSession) -> str:
        result = await session.call_tool(tool, arguments)
        if result.is_error:
            raise McpCallError(TOOL_FAILED)
        return result_text(result)

    return await _exchange(server, deadline, ask)


def result_text(result: types.CallToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            parts.append(block.resource.text)
        elif isinstance(block, types.ResourceLink):
            parts.append(f"{block.name}: {block.uri}")
    if not parts and result.structured_content is not None:
        import json

        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n\n".join(parts)


async def _exchange(server: McpServer, deadline: float, ask: Any) -> Any:
    """`ask(session)` on a fresh connection, within `deadline`; failures in fixed words."""
    budget = _Budget()
    try:
        with anyio.fail_after(deadline):
            async with _connected(server, budget) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await ask(session)
    except BaseException as error:  # noqa: BLE001 - every failure becomes a fixed phrase
        # The SDK may turn a transport's failure into its own error: the budget still tells.
        raise McpCallError(TOO_LARGE if budget.left < 0 else _phrase(error)) from None


def _phrase(error: BaseException) -> str:
    """The fixed phrase for a failure (the first telling one in an exception group)."""
    if isinstance(error, (KeyboardInterrupt, SystemExit, anyio.get_cancelled_exc_class())):
        raise error  # not the server's failure: the caller's own stop
    if isinstance(error, BaseExceptionGroup):
        phrases = [_phrase(inner) for inner in error.exceptions]
        telling = [p for p in phrases if p != CLOSED]
        return (telling or phrases or [CLOSED])[0]
    if isinstance(error, McpCallError):
        return str(error)
    if isinstance(error, TimeoutError):
        return TIMED_OUT
    if isinstance(error, _TooLarge):
        return TOO_LARGE
    if isinstance(error, _NotMcp):
        return NOT_MCP
    if isinstance(error, MCPError) and not _sdk_own(error):
        return ANSWERED_ERROR  # the server's JSON-RPC error answer: its words stay unread
    if isinstance(error, (OSError, httpx2.ConnectError, ConfigError)):
        return NOT_STARTED  # a ConfigError: a header's variable unset since the file was read
    return CLOSED


def _sdk_own(error: MCPError) -> bool:
    """Whether the SDK raised `error` itself rather than passing on the server's answer."""
    message = error.message if isinstance(error.message, str) else ""
    return error.code in _SDK_CODES and bool(_SDK_WORDS.fullmatch(message))


@asynccontextmanager
async def _connected(server: McpServer, budget: _Budget) -> AsyncIterator[Any]:
    if server.url:
        headers = header_values(server)  # read now, kept by this exchange's client alone
        async with _http(server.url, budget, headers) as streams:
            yield streams
    else:
        async with _stdio(server, budget) as streams:
            yield streams


@asynccontextmanager
async def _http(url: str, budget: _Budget, headers: dict[str, str]) -> AsyncIterator[Any]:
    client = httpx2.AsyncClient(
        transport=_CappedTransport(budget),
        timeout=httpx2.Timeout(30.0),
        trust_env=False,
        headers=headers,
    )
    async with (
        client,
        streamable_http_client(url, http_client=client, max_sse_event_size=MAX_BYTES) as streams,
    ):
        yield streams


class _CappedTransport(httpx2.AsyncBaseTransport):
    """httpx2's own transport, every response body counted against the exchange's budget."""

    def __init__(self, budget: _Budget) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.budget = budget

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        response.stream = _CappedStream(stream, self.budget)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, budget: _Budget) -> None:
        self.inner, self.budget = inner, budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.budget.take(len(chunk))
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def _stdio(server: McpServer, budget: _Budget) -> AsyncIterator[Any]:
    """The server's process, its stdout read as capped JSON-RPC lines; killed on exit."""
    process = await anyio.open_process(
        [server.command, *server.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=get_default_environment() | dict(server.env),
        start_new_session=True,  # its own process group: killed whole
    )
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](16)

    async def read() -> None:
        assert process.stdout is not None
        buffer = b""
        async with to_session:
            async for chunk in process.stdout:
                budget.take(len(chunk))
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    if line.strip():
                        await to_session.send(_message(line))

    async def write() -> None:
        assert process.stdin is not None
        async with from_session:
            async for message in from_session:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(data.encode() + b"\n")

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            yield from_server, to_server
            tasks.cancel_scope.cancel()
    finally:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with anyio.CancelScope(shield=True), suppress(OSError):
            await process.aclose()


def _message(line: bytes) -> SessionMessage:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        raise _NotMcp from None
