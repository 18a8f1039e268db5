"""The requests of a page rendered in the browser (search/browser.py): each one refused, or
fetched through the search step's guarded client and handed to the browser as its answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from deep_research.search.capped_body import ACCEPT_ENCODING, UnreadableBody, read_capped
from deep_research.search.netguard import AddressPolicy, BlockedAddress

# What a page may load: its document, scripts and the data they ask for. Images, fonts,
# media, stylesheets, beacons and the rest are refused (nothing of the text is in them).
LOADED_TYPES = frozenset({"document", "script", "xhr", "fetch"})
MAX_REQUESTS = 60  # requests one render may make; later ones are refused
MAX_REDIRECTS = 5  # hops one request may take, as for a fetched page
MAX_BODY_BYTES = 2_000_000  # per response, as for a fetched page


@dataclass
class RequestLog:
    """What one render's page asked for: how many requests, which were refused."""

    made: int = 0
    refused: list[str] = field(default_factory=list)  # refusal reasons (netguard's words)


def router(
    client: httpx.AsyncClient,
    policy: AddressPolicy,
    log: RequestLog,
    closed: type[Exception],
) -> Callable[[Any], Awaitable[None]]:
    """The handler every request of the page goes through: refused, or fetched by `client`
    (a Playwright route's). `closed`: the error answering a route of a closed page raises."""

    async def route(route: Any) -> None:
        request = route.request
        log.made += 1
        if (
            request.resource_type not in LOADED_TYPES
            or request.method not in ("GET", "HEAD")
            or log.made > MAX_REQUESTS
        ):
            await _answer(route.abort("blockedbyclient"), closed)
            return
        headers = {"Accept": request.headers.get("accept", "*/*")}
        headers["Accept-Encoding"] = ACCEPT_ENCODING
        headers["User-Agent"] = request.headers.get("user-agent", "")
        try:
            status, kept, body = await _fetched(
                client, policy, request.method, request.url, headers
            )
        except BlockedAddress as refused:
            log.refused.append(str(refused))
            await _answer(route.abort("blockedbyclient"), closed)
            return
        except (httpx.HTTPError, UnreadableBody):
            await _answer(route.abort("failed"), closed)
            return
        await _answer(route.fulfill(status=status, headers=kept, body=body), closed)

    return route


async def _fetched(
    client: httpx.AsyncClient, policy: AddressPolicy, method: str, url: str, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    """A request of the page, its redirects followed here hop by hop, each through the
    guard: Chromium does not send a redirect it was answered with back through the route."""
    target = httpx.URL(url)
    for _ in range(MAX_REDIRECTS + 1):
        policy.check_url(target)
        async with client.stream(method, target, headers=headers) as response:
            if response.is_redirect:
                target = target.join(response.headers["location"])
                continue
            body, _ = await read_capped(response, MAX_BODY_BYTES)
        kept = {k: v for k, v in response.headers.items() if k == "content-type"}
        return response.status_code, kept, body
    raise httpx.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")


async def _answer(answering: Awaitable[None], closed: type[Exception]) -> None:
    """Give the route its answer; a page closed meanwhile (the deadline) needs none."""
    try:
        await answering
    except closed:
        pass
