"""The Agent Server's auth hook (`aegra.json` `auth.path`): one bearer token, or loopback only.

With `DEEP_RESEARCH_SERVER_TOKEN` set, every API request must carry `Authorization:
Bearer <token>`; the comparison takes the same time whatever the guess, and the token
appears in no response, log line or error. Unset, the server is this machine's alone:
`guard.LoopbackOnly` turns away every peer that is not on loopback, and the launcher
refuses to listen anywhere else.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from langgraph_sdk import Auth

from deep_research.config.agent_server import server_token

IDENTITY = "deep-research"  # every token holder is one user: a team's shared service
UNAUTHORIZED = "a valid bearer token is required"

auth = Auth()


def bearer_matches(authorization: str | None, token: str) -> bool:
    """Whether an `Authorization` header value is `Bearer <token>`, in constant time."""
    scheme, _, given = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        given = ""
    # Digests of equal length: the time taken tells nothing of the token, its length included
    # (and a header may hold any bytes, which compare_digest refuses as str).
    offered = hashlib.sha256(given.strip().encode("utf-8", "replace")).digest()
    return hmac.compare_digest(offered, hashlib.sha256(token.encode()).digest())


def header(headers: Mapping[str, str] | Mapping[bytes, bytes], name: str) -> str | None:
    """One header's value from either shape a server passes (Aegra: str, langgraph-api: bytes)."""
    for key, value in headers.items():
        text_key = key.decode("latin-1") if isinstance(key, bytes) else key
        if text_key.lower() == name:
            return value.decode("latin-1") if isinstance(value, bytes) else value
    return None


def authorized(authorization: str | None) -> bool:
    """Whether a request with this `Authorization` value may pass (any, without a token)."""
    token = server_token()
    return token is None or bearer_matches(authorization, token)


@auth.authenticate
async def authenticate(
    headers: Mapping[str, str] | Mapping[bytes, bytes],
) -> Auth.types.MinimalUserDict:
    """The hook the server calls before every API request (Aegra passes the headers)."""
    if not authorized(header(headers, "authorization")):
        raise Auth.exceptions.HTTPException(status_code=401, detail=UNAUTHORIZED)
    return {"identity": IDENTITY, "is_authenticated": server_token() is not None}
