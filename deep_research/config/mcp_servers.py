"""The MCP servers whose tools researchers may call: the operator's file, and nothing else.

`MCP_SERVERS_FILE` (the environment or the user's own `.env`, never a project's: see
`envfile`; read by `Endpoints`) names a JSON file in the usual shape:

    {"mcpServers": {"papers": {"command": "papers-mcp", "args": ["--db", "x"], "env": {}},
                    "notes": {"url": "http://127.0.0.1:9000/mcp",
                              "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}}}}

A server is started with `command` (stdio) or reached at `url` (streamable HTTP), sent its
`headers` on every request; a header's value may name environment variables as `${VAR}`,
so a secret stays out of the file. The values are read when a request is made
(`header_values`) and never kept in a `McpServer`, shown or logged. No run's
input, setting or API call can name one: another research agent ran whatever its callers
named as an MCP server. The file is read whole under a size cap and checked; a file that is
not usable is a `ConfigError` naming what is wrong, never a server half-configured.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deep_research.config.endpoints import read_endpoints
from deep_research.config.names import ConfigError

MAX_FILE_BYTES = 64_000
MAX_SERVERS = 8
MAX_ARGS = 32
MAX_FIELD = 2_000  # one command, argument, URL or environment value
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,23}")  # short: a tool is offered as `server__tool`
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
MAX_HEADERS = 16
HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}")  # an RFC 9110 token
# Headers the MCP transport sets itself: one from the file would break the exchange.
TRANSPORT_HEADERS = frozenset(
    "accept connection content-length content-type host keep-alive last-event-id "
    "mcp-protocol-version mcp-session-id te trailer transfer-encoding upgrade".split()
)
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]{0,63})\}")
_WHERE = "MCP_SERVERS_FILE"


@dataclass(frozen=True)
class McpServer:
    """One configured server: `command` and `args` (stdio) or `url` (streamable HTTP)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    # Header names and values as written, `${VAR}` unresolved (`header_values` resolves).
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)


def configured() -> tuple[McpServer, ...]:
    """The servers `MCP_SERVERS_FILE` configures (none when it is unset)."""
    path = read_endpoints().mcp_servers_file
    return read_file(Path(path)) if path else ()


async def in_run() -> tuple[McpServer, ...]:
    """`configured()`, for a step of the graph: the file is read off the event loop (a read
    blocks, and `langgraph dev` fails a step that blocks its loop). An unusable file is a
    `ConfigError` naming what is wrong; the CLI and `doctor` say so before a run starts."""
    if not read_endpoints().mcp_servers_file:
        return ()
    return await asyncio.to_thread(configured)


def problem() -> str | None:
    """What makes `MCP_SERVERS_FILE` unusable, if anything: a run with calls to spend is
    refused at its start, not failed in every researcher."""
    try:
        configured()
    except ConfigError as error:
        return str(error)
    return None


def read_file(path: Path) -> tuple[McpServer, ...]:
    """The servers a file configures, checked (`ConfigError` for anything unusable)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{_WHERE}: {path} cannot be read ({error.strerror})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"{_WHERE}: {path} is over {MAX_FILE_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ConfigError(f"{_WHERE}: {path} is not UTF-8 JSON") from None
    return parse(data)


def parse(data: object) -> tuple[McpServer, ...]:
    """The servers of a loaded `{"mcpServers": {...}}` object, checked."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'{_WHERE}: the file must be an object with an "mcpServers" object')
    if len(servers) > MAX_SERVERS:
        raise ConfigError(f"{_WHERE}: at most {MAX_SERVERS} servers")
    return tuple(_server(name, entry) for name, entry in servers.items())


def _server(name: str, entry: object) -> McpServer:
    if not NAME.fullmatch(name):
        raise ConfigError(
            f"{_WHERE}: a server's name is 1-24 of a-z, 0-9, _ and -, starting with a letter "
            f"or digit ({name[:40]!r} is not)"
        )
    if not isinstance(entry, dict):
        raise ConfigError(f"{_WHERE}: server {name!r} must be an object")
    unknown = set(entry) - {"command", "args", "env", "url", "headers", "type", "transport"}
    if unknown:
        raise ConfigError(f"{_WHERE}: server {name!r} has unknown keys: {sorted(unknown)[:5]}")
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise ConfigError(f"{_WHERE}: server {name!r} needs a command or a url (one of them)")
    if url is not None:
        server = McpServer(name, url=_url(name, url), headers=_headers(name, entry))
        header_values(server)  # a reference to an unset variable is refused now, not later
        return server
    if "headers" in entry:
        raise ConfigError(f"{_WHERE}: server {name!r}: headers are for a url server (use env)")
    args, env = entry.get("args", []), entry.get("env", {})
    if not isinstance(args, list) or len(args) > MAX_ARGS:
        raise ConfigError(f"{_WHERE}: server {name!r}: args is a list of at most {MAX_ARGS}")
    if not isinstance(env, dict) or len(env) > MAX_ARGS:
        raise ConfigError(f"{_WHERE}: server {name!r}: env is an object of at most {MAX_ARGS}")
    for key in env:
        if not ENV_NAME.fullmatch(key):
            raise ConfigError(f"{_WHERE}: server {name!r}: env names are A-Z, 0-9 and _")
    return McpServer(
        name,
        command=_text(name, "command", command),
        args=tuple(_text(name, "args", arg) for arg in args),
        env=tuple((key, _text(name, "env", value)) for key, value in env.items()),
    )


def _text(server: str, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_FIELD or "\0" in value:
        raise ConfigError(
            f"{_WHERE}: server {server!r}: each {field} value is a non-empty string "
            f"of at most {MAX_FIELD} characters"
        )
    return value


def _url(server: str, value: Any) -> str:
    from urllib.parse import urlsplit

    text = _text(server, "url", value)
    parts = urlsplit(text) if text.isascii() and text.isprintable() and " " not in text else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{_WHERE}: server {server!r}: url must be an http(s) URL with a host")
    return text


def _headers(server: str, entry: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    headers = entry.get("headers", {})
    if not isinstance(headers, dict) or len(headers) > MAX_HEADERS:
        raise ConfigError(
            f"{_WHERE}: server {server!r}: headers is an object of at most {MAX_HEADERS}"
        )
    for name in headers:
        if not HEADER_NAME.fullmatch(name) or name.lower() in TRANSPORT_HEADERS:
            raise ConfigError(
                f"{_WHERE}: server {server!r}: a header's name is a token of at most 64 "
                f"characters, not one the MCP transport sets ({name[:40]!r} is not usable)"
            )
    return tuple((name, _text(server, "headers", value)) for name, value in headers.items())


def header_values(server: McpServer) -> dict[str, str]:
    """The headers to send `server`, each `${VAR}` replaced by the environment's value.
    Raises `ConfigError` naming the header and the variable, never a value."""
    import os

    sent: dict[str, str] = {}
    for name, written in server.headers:
        for variable in REFERENCE.findall(written):
            if not os.environ.get(variable):
                raise ConfigError(
                    f"{_WHERE}: server {server.name!r}: header {name} refers to {variable}, "
                    "which is not set"
                )
        value = REFERENCE.sub(lambda found: os.environ[found[1]], written)
        if (
            len(value) > MAX_FIELD
            or not (value.isascii() and value.isprintable())
            or not value.strip()
        ):
            raise ConfigError(
                f"{_WHERE}: server {server.name!r}: header {name}'s value must be one "
                f"printable ASCII line of at most {MAX_FIELD} characters"
            )
        sent[name] = value
    return sent
