"""One GET to a keyless search API (arXiv, Wikipedia), bounded, its failures classified.

The endpoint is the operator's (ARXIV_API_URL, WIKIPEDIA_API_URL: the environment, never
a run), so like SEARXNG_URL it may be a mirror on the local network and is not held to
page fetching's address guard. Everything else a page is held to holds: one deadline for
the whole answer, its body read within a byte cap (compressed bytes counted,
`capped_body`), no redirect followed. The result URLs these APIs give are ordinary
results: any page fetched from them goes through the guard.

Error messages reach the model outside the data fences: they hold fixed words, the
status and the query, never the server's own text.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections.abc import Callable

import httpx

from deep_research.runtime.http import tls_context
from deep_research.search.capped_body import ACCEPT_ENCODING, UnreadableBody, read_capped
from deep_research.search.types import Results, SearchError

MAX_ANSWER_BYTES = 4_000_000  # a page of 20 results is ~100 kB; more is not an answer
TIMEOUT = 20.0  # seconds for the whole answer, retries not included
USER_AGENT = "deep_research/0.1 (research agent; keyless scholarly search)"
# Retry-After values longer than this are not worth parsing (no search waits a day).
MAX_RETRY_AFTER_CHARS = 40


def printable_line(text: str) -> str:
    """`text` on one line, without control or format characters (bidi overrides included)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def retry_after(header: str | None, now: float | None = None) -> float | None:
    """Seconds a Retry-After header asks to wait (a number or an HTTP date), or None."""
    if not header or len(header) > MAX_RETRY_AFTER_CHARS:
        return None
    value = header.strip()
    if value.isascii() and value.isdigit():  # "²" is a digit to str.isdigit, not to float
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def status_error(provider: str, query: str, response: httpx.Response) -> SearchError:
    """What a non-200 answer means for the chain: retried, rate-limited or final."""
    status = response.status_code
    wait = retry_after(response.headers.get("retry-after"))
    message = f"{provider} failed for {query!r}: HTTP {status}"
    if 300 <= status < 400:
        return SearchError(message + " (a redirect, not followed)", status=status)
    return SearchError(
        message,
        transient=status >= 500,
        rate_limited=status == 429,
        retry_after=wait if status in (429, 503) else None,
        status=status,
    )


async def get(
    provider: str,
    query: str,
    url: str,
    params: dict[str, str],
    *,
    accept: str,
    timeout: float = TIMEOUT,
    max_bytes: int | None = None,
    trust_env: bool = True,
) -> bytes:
    """The body of `GET url?params` (at most `max_bytes`, else `MAX_ANSWER_BYTES`);
    raises `SearchError` for anything but a whole 200. `trust_env=False` sends it past the
    environment's proxy settings (a self-hosted instance on this machine or network)."""
    max_bytes = MAX_ANSWER_BYTES if max_bytes is None else max_bytes
    failed = f"{provider} failed for {query!r}"
    try:
        async with asyncio.timeout(timeout):
            return await _get(provider, query, url, params, accept, timeout, max_bytes, trust_env)
    except TimeoutError as error:
        raise SearchError(f"{failed}: no answer within {timeout:g} s", transient=True) from error
    except httpx.TransportError as error:
        # The type only: a transport error's text can quote what the server sent.
        raise SearchError(f"{failed}: {type(error).__name__}", transient=True) from error
    except httpx.HTTPError as error:
        raise SearchError(f"{failed}: {type(error).__name__}") from error
    except UnreadableBody as error:
        raise SearchError(f"{failed}: {error}") from error


async def _get(
    provider: str,
    query: str,
    url: str,
    params: dict[str, str],
    accept: str,
    timeout: float,
    max_bytes: int,
    trust_env: bool = True,
) -> bytes:
    headers = {"User-Agent": USER_AGENT, "Accept": accept, "Accept-Encoding": ACCEPT_ENCODING}
    async with (
        httpx.AsyncClient(
            verify=tls_context(),
            timeout=timeout,
            follow_redirects=False,
            headers=headers,
            trust_env=trust_env,
        ) as client,
        client.stream("GET", url, params=params) as response,
    ):
        if response.status_code != 200:
            raise status_error(provider, query, response)
        body, cut = await read_capped(response, max_bytes)
    if cut:
        raise SearchError(
            f"{provider} failed for {query!r}: its answer is over {max_bytes:,} bytes, not read"
        )
    return body


async def parsed(
    provider: str,
    query: str,
    url: str,
    params: dict[str, str],
    parse: Callable[[bytes], Results],
    *,
    accept: str,
    timeout: float,
    max_results: int,
) -> Results:
    """One `get`, its answer (up to 4 MB) parsed off the event loop the other researchers
    share, and cut to `max_results`: what each scholarly provider's search returns."""
    body = await get(provider, query, url, params, accept=accept, timeout=timeout)
    found = await asyncio.to_thread(parse, body)
    return Results(found[:max_results], found.malformed)
