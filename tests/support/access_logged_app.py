"""The project's server app behind an access logger shaped like Aegra's, for log tests.

Aegra logs each request through structlog, the URL with its query string in a structured
field, besides uvicorn's own access line. This wraps `deep_research.server.app:app` with a
logger of that shape (structlog routed through the standard library, rendered as JSON to
stdout), so a test that runs the launcher on it sees both kinds of access log.
"""

from __future__ import annotations

import logging
import sys

import structlog
from starlette.types import Receive, Scope, Send

from deep_research.server.app import app as served

_handler = logging.StreamHandler(sys.stdout)
_handler.setFormatter(
    structlog.stdlib.ProcessorFormatter(processor=structlog.processors.JSONRenderer())
)
logging.getLogger("test.access").addHandler(_handler)
logging.getLogger("test.access").setLevel(logging.INFO)
structlog.configure(
    processors=[structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
    logger_factory=structlog.stdlib.LoggerFactory(),
    wrapper_class=structlog.stdlib.BoundLogger,
)
access = structlog.stdlib.get_logger("test.access")


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    await served(scope, receive, send)
    if scope["type"] == "http":
        query = scope.get("query_string", b"").decode("latin-1")
        url = scope["path"] + (f"?{query}" if query else "")
        access.info(f"{scope['method']} {url}", http={"url": url, "method": scope["method"]})
