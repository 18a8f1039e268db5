"""`python -m deep_research.server`: one Aegra instance, refusing an address it cannot guard.

It checks what Aegra itself does not: a non-loopback address needs a token, a token needs
the config's auth hook, and the token must be long enough. Then it names the config for
Aegra (`AEGRA_CONFIG`), tells the instance's `/mcp` tool its own address, prepares the
shared database's schema one instance at a time (`schema`), and runs uvicorn in this
process, so the instance is this PID (a supervisor or a test stops it by PID; SIGKILL leaves
its runs to another instance's reaper).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from deep_research.config.agent_server import (
    AGENT_URL_ENV,
    TOKEN_ENV,
    is_loopback,
    server_token,
    token_problem,
)
from deep_research.errors import DeepResearchError
from deep_research.server import schema
from deep_research.text.secrets import redact_log_records

DEFAULT_PORT = 2026  # Aegra's own default
APP = "aegra_api.main:app"


class LaunchRefused(DeepResearchError, ValueError):
    """The instance would be unsafe or broken as asked: the message says what to change."""


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m deep_research.server",
        description="Serve the deep_research graph on Aegra (Postgres + Redis).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on")
    parser.add_argument(
        "--config", type=Path, default=Path("aegra.json"), help="Aegra config (aegra.json)"
    )
    return parser.parse_args(argv)


def check(host: str, config: Path, token: str | None) -> dict[str, object]:
    """The config, once host, token and config agree; else `LaunchRefused` saying why."""
    if (problem := token_problem(token)) is not None:
        raise LaunchRefused(problem)
    if token is None and not is_loopback(host):
        raise LaunchRefused(
            f"refusing to listen on {host} without a token: set {TOKEN_ENV} "
            "(docs/distributed.md), or listen on 127.0.0.1"
        )
    try:
        loaded = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise LaunchRefused(f"cannot read the Aegra config {config}: {error}") from error
    if not isinstance(loaded, dict) or not isinstance(loaded.get("graphs"), dict):
        raise LaunchRefused(f"{config} names no graphs: use the project's aegra.json")
    if token is not None and not isinstance(loaded.get("auth"), dict):
        raise LaunchRefused(f"{TOKEN_ENV} is set but {config} has no auth hook to check it")
    return loaded


def own_url(host: str, port: int) -> str:
    """Where this instance answers itself: loopback when it listens on every address."""
    if host in ("0.0.0.0", "", "::"):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    try:
        check(args.host, args.config, server_token())
    except LaunchRefused as error:
        print(f"deep_research.server: {error}", file=sys.stderr)
        return 2
    # No secret in any log: the access log's URLs included (`?token=` is refused, not hidden).
    redact_log_records()
    os.environ["AEGRA_CONFIG"] = str(args.config.resolve())
    os.environ[AGENT_URL_ENV] = own_url(args.host, args.port)
    if schema.wanted():
        try:
            schema.prepare_aegra()
        except schema.SchemaError as error:
            print(f"deep_research.server: {error}", file=sys.stderr)
            return 1
    import uvicorn  # the server extra's: only once the launch is allowed

    uvicorn.run(APP, host=args.host, port=args.port, log_level="info")
    return 0
