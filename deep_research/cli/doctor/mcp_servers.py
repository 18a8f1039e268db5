"""`doctor`'s lines for the operator's MCP servers (MCP_SERVERS_FILE): one a server, each
listed once as a researcher would list it (search/mcp_client.py). The MCP client (and `mcp`)
is imported only when a server is configured: an install where it cannot be imported gets
one warning line, not a `doctor` that cannot start."""

from __future__ import annotations

import asyncio
import importlib
from types import ModuleType

from deep_research.cli.doctor.checks import Check
from deep_research.config import mcp_servers
from deep_research.config.mcp_servers import McpServer
from deep_research.config.names import ConfigError
from deep_research.search import mcp_tools

REINSTALL = "reinstall the project as the README says (pip install -e .)"
FIX = "check the server's entry in MCP_SERVERS_FILE (docs/search.md#tools-of-mcp-servers)"


async def check_mcp_servers(timeout: float) -> list[Check]:
    """A line per configured server (none without MCP_SERVERS_FILE); a file that cannot be
    used is one failed line. A server that cannot be listed only warns: a run goes on
    without its tools."""
    try:
        servers = mcp_servers.configured()
    except ConfigError as error:
        return [Check("mcp servers", "fail", str(error), "fix MCP_SERVERS_FILE")]
    if not servers:
        return []
    try:
        client = await asyncio.to_thread(importlib.import_module, mcp_tools.CLIENT)
    except mcp_tools.BROKEN_INSTALL as error:  # as a run meets it: no tools, the run goes on
        detail = f"the MCP client cannot be imported ({type(error).__name__}: {error}); "
        detail += "runs go on without MCP tools"
        return [Check("mcp servers", "warn", detail, REINSTALL)]
    deadline = max(1.0, min(timeout, client.LIST_DEADLINE))
    return list(await asyncio.gather(*(_check(client, server, deadline) for server in servers)))


async def _check(client: ModuleType, server: McpServer, deadline: float) -> Check:
    label = f"mcp {server.name}"
    try:
        tools = await client.list_tools(server, deadline)
    except client.McpCallError as error:
        return Check(label, "warn", f"{error}; a run goes on without its tools", FIX)
    usable, refused = mcp_tools.offerable(tools)
    detail = f"reachable, {len(tools)} tools ({len(usable)} offered to researchers)"
    if not refused:
        return Check(label, "ok", detail)
    names = ", ".join(name for name, _ in refused[:5])
    detail += f"; not offered, their input schema cannot be: {names}"
    return Check(label, "warn", detail, FIX)
