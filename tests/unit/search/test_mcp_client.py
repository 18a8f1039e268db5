"""The bounded MCP client against the real test server (mcp 2.x) over stdio and HTTP,
well-behaved and hostile: every failure is a fixed phrase and costs only its exchange."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.config.mcp_servers import McpServer
from deep_research.search import mcp_client
from deep_research.search.mcp_client import McpCallError, call_tool, list_tools
from tests.support.mcp_config import ROOT, stdio_entry
from tests.support.mcp_tool_server import SECRET_ERROR


def stdio(mode: str = "") -> McpServer:
    entry = stdio_entry(mode)
    env = entry["env"]
    assert isinstance(env, dict)
    return McpServer("t", command=sys.executable, args=tuple(entry["args"]), env=tuple(env.items()))  # type: ignore[arg-type]


@pytest.fixture
def http_server() -> Iterator[object]:
    """Starts the test server over streamable HTTP on 127.0.0.1; yields a factory by mode."""
    started: list[subprocess.Popen[bytes]] = []

    def start(mode: str = "") -> McpServer:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        args = [sys.executable, "-m", "tests.support.mcp_tool_server", "http", str(port), mode]
        started.append(subprocess.Popen(args, cwd=ROOT))
        for _ in range(200):
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    return McpServer("h", url=f"http://127.0.0.1:{port}/mcp")
            time.sleep(0.05)
        raise AssertionError("the HTTP test server did not start")

    yield start
    for process in started:
        process.kill()
        process.wait()


async def test_a_stdio_server_lists_its_tools_and_answers_a_call() -> None:
    tools = await list_tools(stdio())
    assert [tool.name for tool in tools] == ["lookup", "fail"]
    assert tools[0].schema["properties"]["term"]["type"] == "string"
    text = await call_tool(stdio(), "lookup", {"term": "heat"})
    assert "https://papers.example/heat" in text


async def test_an_http_server_lists_its_tools_and_answers_a_call(http_server: object) -> None:
    server = http_server("")  # type: ignore[operator]
    assert [tool.name for tool in await list_tools(server)] == ["lookup", "fail"]
    assert "https://papers.example/cold" in await call_tool(server, "lookup", {"term": "cold"})


@pytest.mark.parametrize(
    ("mode", "phrase", "deadline"),
    [
        ("hang", mcp_client.TIMED_OUT, 3.0),
        ("flood", mcp_client.TOO_LARGE, 60.0),
        ("die", mcp_client.CLOSED, 60.0),
    ],
)
async def test_a_hostile_stdio_server_costs_only_its_call(
    mode: str, phrase: str, deadline: float
) -> None:
    with pytest.raises(McpCallError) as failed:
        await call_tool(stdio(mode), "lookup", {"term": "x"}, deadline=deadline)
    assert str(failed.value) == phrase


@pytest.mark.parametrize(
    ("mode", "phrase"),
    [
        ("hang", mcp_client.TIMED_OUT),
        ("flood", mcp_client.TOO_LARGE),
        ("die", mcp_client.CLOSED),
    ],
)
async def test_a_hostile_http_server_costs_only_its_call(
    http_server: object, mode: str, phrase: str
) -> None:
    server = http_server(mode)  # type: ignore[operator]
    with pytest.raises(McpCallError) as failed:
        await call_tool(server, "lookup", {"term": "x"}, deadline=5.0)
    assert str(failed.value) == phrase


async def test_a_non_json_line_ends_the_exchange() -> None:
    with pytest.raises(McpCallError) as failed:
        await list_tools(stdio("junk"))
    assert str(failed.value) == mcp_client.NOT_MCP


async def test_a_tool_s_error_and_a_missing_command_are_fixed_phrases(tmp_path: Path) -> None:
    with pytest.raises(McpCallError) as failed:
        await call_tool(stdio(), "fail", {})
    assert str(failed.value) == mcp_client.TOOL_FAILED and SECRET_ERROR not in str(failed.value)
    with pytest.raises(McpCallError) as missing:
        await list_tools(McpServer("m", command=str(tmp_path / "no-such-server")))
    assert str(missing.value) == mcp_client.NOT_STARTED
    with pytest.raises(McpCallError) as unreachable:
        await list_tools(McpServer("u", url="http://127.0.0.1:9/mcp"))
    assert str(unreachable.value) == mcp_client.NOT_STARTED


async def test_a_server_s_process_group_is_gone_after_a_hung_call(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    script = tmp_path / "hang.sh"
    # A server that starts a child which would outlive it, then never answers.
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {marker}\nsleep 300\n")
    script.chmod(0o755)
    with pytest.raises(McpCallError):
        await list_tools(McpServer("s", command=str(script)), deadline=1.0)
    child = int(marker.read_text())
    for _ in range(100):
        if not Path(f"/proc/{child}").exists() or "Z" in _state(child):
            break
        time.sleep(0.02)
    assert not Path(f"/proc/{child}").exists() or "Z" in _state(child)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return "Z"


async def test_a_huge_description_over_http_is_listed_whole_within_the_cap(
    http_server: object,
) -> None:
    """The client reads it (175,000 characters, under 4 MB); clipping is the offering's."""
    [lookup, _] = await list_tools(http_server("huge"))  # type: ignore[operator]
    assert len(lookup.description) > 100_000


@pytest.mark.parametrize(
    ("code", "words", "phrase"),
    [
        ("-32603", None, mcp_client.ANSWERED_ERROR),  # internal error
        # JSON-RPC's "server error": the SDK's own code for a closed connection, but these
        # are the server's words, so the server answered.
        ("-32000", None, mcp_client.ANSWERED_ERROR),
        ("-32001", None, mcp_client.ANSWERED_ERROR),  # the SDK's timeout code, likewise
        ("-32000", "Connection closed", mcp_client.CLOSED),  # as the SDK words its own
        ("-32000", "SSE stream failed: a\nb", mcp_client.CLOSED),
        ("-32001", "Request 'tools/call' timed out", mcp_client.CLOSED),
        # The SDK's words, but not all of them, or under another code: the server's.
        ("-32000", "Connection closed: internal-secret", mcp_client.ANSWERED_ERROR),
        ("-32603", "Connection closed", mcp_client.ANSWERED_ERROR),
    ],
)
async def test_a_json_rpc_error_answer_is_its_own_phrase_without_the_server_s_words(
    code: str, words: str | None, phrase: str
) -> None:
    from tests.support.mcp_error_server import SECRET_MESSAGE

    args = ("-m", "tests.support.mcp_error_server", code, *([words] if words else []))
    server = McpServer("e", command=sys.executable, args=args, env=(("PYTHONPATH", str(ROOT)),))
    for ask in (list_tools(server), call_tool(server, "lookup", {"term": "x"})):
        with pytest.raises(McpCallError) as failed:
            await ask
        assert str(failed.value) == phrase
        assert failed.value.__cause__ is None and "secret" not in repr(failed.value)
    assert "internal-secret" in SECRET_MESSAGE
    assert mcp_client.ANSWERED_ERROR == "the server answered with an error"


SECRET_KEY = "papers-key-5b1e9c77d2"  # named so that no redactor would know it


async def test_an_http_server_s_headers_are_sent_and_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`${VAR}` in a header's value is read from the environment when a request is made; a
    server that refuses it (echoing the key it got) is a fixed phrase without the key."""
    from tests.support.mcp_config import http_server

    log = tmp_path / "keys.log"
    with http_server("auth", MCP_EXPECTED_KEY=SECRET_KEY, MCP_HEADER_LOG=str(log)) as url:
        server = McpServer("h", url=url, headers=(("X-Api-Key", "${PAPERS_AUTH}"),))
        monkeypatch.setenv("PAPERS_AUTH", SECRET_KEY)
        assert [tool.name for tool in await list_tools(server)] == ["lookup", "fail"]
        assert "https://papers.example/k" in await call_tool(server, "lookup", {"term": "k"})
        assert set(log.read_text().splitlines()) == {SECRET_KEY}, "sent on every request"
        monkeypatch.setenv("PAPERS_AUTH", "wrong-" + SECRET_KEY)
        with pytest.raises(McpCallError) as refused:
            await list_tools(server, deadline=10.0)
        monkeypatch.delenv("PAPERS_AUTH")
        with pytest.raises(McpCallError) as unset:
            await list_tools(server, deadline=10.0)
    assert str(unset.value) == mcp_client.NOT_STARTED
    shown = f"{refused.value!r} {refused.value} {unset.value!r} {server!r} {caplog.text}"
    assert SECRET_KEY not in shown and "PAPERS_AUTH" not in repr(server)
