"""MCP servers files for tests: the real test server (tests/support/mcp_tool_server.py)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.brain import ResearchBrain, _texts
from tests.support.fakes.openai_server import Reply, ToolCall

ROOT = Path(__file__).resolve().parents[2]
TOOL = "papers__lookup"
URL = re.compile(r"https://papers\.example/[\w-]+")


def stdio_entry(mode: str = "", **env: str) -> dict[str, object]:
    """A `mcpServers` entry starting the test server over stdio (hostile with `mode`)."""
    args = ["-m", "tests.support.mcp_tool_server", "stdio", *([mode] if mode else [])]
    return {"command": sys.executable, "args": args, "env": {"PYTHONPATH": str(ROOT), **env}}


def use_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: dict[str, object]
) -> Path:
    """Write an MCP servers file and point MCP_SERVERS_FILE at it."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    monkeypatch.setenv("MCP_SERVERS_FILE", str(path))
    return path


@contextmanager
def http_server(mode: str = "", **env: str) -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1 (its environment and `env`); its
    URL, the server stopped after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [sys.executable, "-m", "tests.support.mcp_tool_server", "http", str(port), mode]
    process = subprocess.Popen(args, cwd=ROOT, env={**os.environ, **env})
    try:
        for _ in range(200):
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("the HTTP test server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


class McpBrain(ResearchBrain):
    """Its researchers call the MCP tool when offered (`calls` times in one reply), then
    cite the links its results gave."""

    def __init__(self, topics: list[str], calls: int = 1) -> None:
        super().__init__(topics=topics)
        self.calls = calls

    async def _research(self, body: dict[str, Any]) -> Reply:
        offered = [tool["function"]["name"] for tool in body.get("tools", [])]
        results = _texts(body, "tool")
        topic = _texts(body, "user")[0]
        if not results and TOOL in offered:
            term = topic.split()[0]
            calls = [ToolCall(TOOL, {"term": f"{term}{i}"}) for i in range(self.calls)]
            return Reply(tool_calls=[*calls, ToolCall("web_search", {"queries": [topic]})])
        if not results:
            return Reply(tool_calls=[ToolCall("web_search", {"queries": [topic]})])
        links = sorted(set(URL.findall("\n".join(results))))
        return Reply(
            content=f"Findings on {topic}: "
            + " ".join(f"[finding {i}]({url})" for i, url in enumerate(links, 1))
        )
