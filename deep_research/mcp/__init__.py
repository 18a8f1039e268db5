"""Deep research as an MCP tool, served at `/mcp` by the Agent Server (`langgraph dev`).

`langgraph.json` mounts `app` as its custom HTTP app; custom routes come before the
server's own, and `"disable_mcp": true` drops the built-in `/mcp` (which exposes the graph
as a tool taking `messages: string` and returns a `repr()` of the whole output state).
Only the Agent Server imports this package: `deep_research.graph` and the CLI never do.
"""

from deep_research.mcp.app import app

__all__ = ["app"]
