"""The documented deployment: a bearer token on every request, `/mcp` included; and the
launcher's refusal to listen beyond loopback without one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import httpx2
import pytest
from langgraph_sdk import get_client
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from tests.support.agent_cluster import SERVER_VENV, agent_cluster, server_python
from tests.support.brain import LINK
from tests.support.cluster_brain import ClusterBrain, question
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT, REPO

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TOKEN = "test-token-0123456789abcdef"
RUN_TIMEOUT = 300.0
MCP_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


async def test_every_route_but_the_probes_needs_the_token_and_the_mcp_tool_works_with_it(
    tmp_path: Path, postgres_dsn: str, redis_url: str
) -> None:
    env = {"DEEP_RESEARCH_SERVER_TOKEN": TOKEN}
    with (
        ScriptedOpenAIServer(ClusterBrain()) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(
            tmp_path, model, tavily, postgres_dsn, redis_url, count=1, extra_env=env
        ) as cluster,
    ):
        [instance] = cluster.instances
        async with httpx.AsyncClient(base_url=instance.url, trust_env=False) as http:
            # Aegra's probes and its name/version answer without a token, for load balancers;
            # nothing else of the app's own does (no FastAPI docs pages on our custom app).
            for probe in ("/health", "/ready", "/live", "/info", "/"):
                answered = await http.get(probe)
                assert answered.status_code == 200, (probe, answered.text)
            for page in ("/docs", "/redoc", "/openapi.json"):
                assert (await http.get(page)).status_code in (401, 404), page
            for method, path in (
                ("POST", "/assistants/search"),
                ("GET", "/threads/00000000-0000-0000-0000-000000000000"),
                ("POST", "/threads"),
                ("POST", "/runs/wait"),
                ("GET", "/store/items?key=k&namespace=n"),
            ):
                refused = await http.request(method, path, json={})
                assert refused.status_code == 401, (method, path, refused.text)
            for headers in (
                {},
                {"Authorization": "Bearer wrong-token-0123456789"},
                {"Authorization": TOKEN},
                {"Authorization": f"Basic {TOKEN}"},
            ):
                searched = await http.post("/threads/search", json={}, headers=headers)
                assert searched.status_code == 401, (headers, searched.text)
                assert TOKEN not in searched.text
                mcp = await http.post("/mcp", json=MCP_INIT, headers=MCP_HEADERS | headers)
                assert mcp.status_code == 401, (headers, mcp.text)
            good = {"Authorization": f"Bearer {TOKEN}"}
            assert (await http.post("/threads/search", json={}, headers=good)).status_code == 200
        sdk = get_client(url=instance.url, api_key=None, headers=good, timeout=RUN_TIMEOUT)
        assert [a["graph_id"] for a in await sdk.assistants.search()] == [ASSISTANT]
        # The MCP tool runs research through its own instance, with the token.
        authed = httpx2.AsyncClient(headers=good, timeout=RUN_TIMEOUT, trust_env=False)
        transport = streamable_http_client(instance.mcp_url, http_client=authed)
        async with authed, Client(transport) as client:
            result = await client.call_tool(
                "deep_research", {"question": question(3), "max_searches": 4}
            )
        log = instance.log.read_text(errors="replace")
    assert not result.is_error, result
    [block] = result.content
    assert isinstance(block, TextContent)
    cited = set(LINK.findall(block.text))
    assert cited and cited <= tavily.returned_urls, block.text
    assert TOKEN not in log  # never logged, not even in a refused request


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({}, ["--host", "0.0.0.0"], "refusing to listen on 0.0.0.0 without a token"),
        ({}, ["--host", "192.0.2.1"], "refusing to listen on 192.0.2.1 without a token"),
        ({"DEEP_RESEARCH_SERVER_TOKEN": "short"}, [], "at least 16 characters"),
    ],
)
def test_the_launcher_refuses_what_it_cannot_guard(
    tmp_path: Path, env: dict[str, str], args: list[str], message: str
) -> None:
    result = subprocess.run(
        [
            str(server_python()),
            "-m",
            "deep_research.server",
            *args,
            "--config",
            str(REPO / "aegra.json"),
        ],
        cwd=tmp_path,
        env={
            "PATH": str(SERVER_VENV / "bin"),
            "PYTHONPATH": str(REPO),
            "DEEP_RESEARCH_DOTENV": "0",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and message in result.stderr, result
    assert "short" not in result.stderr  # the token itself is not repeated
