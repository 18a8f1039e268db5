"""The MCP app in process: one tool with honest hints, stateless over `/mcp`, local hosts only.
(The tool's arguments and wording: test_tool.py; a real server: tests/e2e/test_mcp.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from deep_research.mcp.app import app, server
from deep_research.mcp.tool import DESCRIPTION

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(
        app, base_url="http://127.0.0.1:2024"
    ) as client:  # lifespan: the session manager
        yield client


async def test_one_tool_that_reads_the_open_web_and_changes_nothing() -> None:
    [tool] = await server.list_tools()
    assert (tool.name, tool.description) == ("deep_research", DESCRIPTION)
    hints = tool.annotations
    assert hints is not None and hints.read_only_hint and hints.open_world_hint
    assert hints.idempotent_hint is False and hints.destructive_hint is False
    assert tool.output_schema is None  # the report is the answer, as one text block


def test_a_local_client_is_served_without_a_session(client: TestClient) -> None:
    response = client.post("/mcp", json=INITIALIZE, headers=HEADERS)
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers  # stateless: nothing kept between calls
    data = next(line for line in response.text.splitlines() if line.startswith("data:"))
    assert json.loads(data.removeprefix("data:"))["result"]["serverInfo"]["name"] == "deep_research"


def test_another_host_name_is_refused(client: TestClient) -> None:
    # DNS rebinding: a web page's script reaching 127.0.0.1 under its own host name.
    refused = client.post("/mcp", json=INITIALIZE, headers={**HEADERS, "Host": "evil.example"})
    assert refused.status_code in (400, 421)
