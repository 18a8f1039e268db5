"""MCP servers files for tests: the real test server (tests/support/mcp_tool_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
