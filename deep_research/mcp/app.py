"""The MCP server: one tool, `deep_research`, over streamable HTTP at `/mcp`."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations

from deep_research.mcp.tool import DESCRIPTION, StrictTool, deep_research

tool = Tool.from_function(
    deep_research,
    title="Deep research",
    description=DESCRIPTION,
    # It reads the web and writes nothing the caller owns; the same question may come back
    # with a different report, hence not idempotent.
    annotations=ToolAnnotations(
        read_only_hint=True, open_world_hint=True, idempotent_hint=False, destructive_hint=False
    ),
    structured_output=False,  # the report is the answer: one Markdown text block
)
server = MCPServer(
    name="deep_research",
    title="Deep research",
    instructions="Call `deep_research` for questions that need several web searches and a "
    "cited written answer; it takes minutes, so use it for research, not quick facts.",
    tools=[StrictTool.strict(tool)],
)
# Stateless: each call is one POST answered on its own event stream (progress
# notifications, then the result), so nothing is kept between calls and a restart of the
# server loses no session. The SDK's default host check (DNS-rebinding protection:
# Host must be 127.0.0.1, localhost or [::1]) stays on: the endpoint has no auth.
app = server.streamable_http_app(stateless_http=True)
