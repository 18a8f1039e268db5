"""How a distributed Agent Server instance is reached and guarded: two environment variables.

`DEEP_RESEARCH_SERVER_TOKEN` is the bearer token every request must carry (unset: the
server answers loopback only); `DEEP_RESEARCH_AGENT_URL` is where the instance's own
`/mcp` tool sends its runs (the launcher sets it to the instance itself). Both are read
from the environment at the moment of use and belong to the machine, never to a run.
The token matches the redactor's `*_TOKEN` names (`text.secrets`), so its value is
scrubbed from every text the package writes.
"""

from __future__ import annotations

import ipaddress
import os

TOKEN_ENV = "DEEP_RESEARCH_SERVER_TOKEN"
AGENT_URL_ENV = "DEEP_RESEARCH_AGENT_URL"
# Shorter tokens are guessable; docs/distributed.md makes one with `openssl rand -hex 32`.
MIN_TOKEN_CHARS = 16


def server_token() -> str | None:
    """The token the server requires, or None: unset or blank means loopback only."""
    return os.environ.get(TOKEN_ENV, "").strip() or None


def token_problem(token: str | None) -> str | None:
    """Why `token` cannot guard a server (too short, not printable ASCII), or None."""
    if token is None:
        return None
    if len(token) < MIN_TOKEN_CHARS:
        return f"{TOKEN_ENV} must be at least {MIN_TOKEN_CHARS} characters"
    if not (token.isascii() and token.isprintable()) or " " in token:
        return f"{TOKEN_ENV} must be printable ASCII without spaces (it goes in a header)"
    return None


def agent_url() -> str | None:
    """Where the MCP tool sends its runs; None: the in-process loopback of `langgraph dev`."""
    return os.environ.get(AGENT_URL_ENV, "").strip() or None


def is_loopback(host: str) -> bool:
    """Whether a host name or address is this machine only (`localhost`, 127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
