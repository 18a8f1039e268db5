"""Search providers behind one small interface: the web's here, arXiv and Wikipedia in
modules of their own (`arxiv`, `wikipedia`, `openalex`, `europepmc`)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, TypeGuard

import httpx
from ddgs import DDGS
from ddgs.exceptions import RatelimitException
from ddgs.exceptions import TimeoutException as DdgsTimeout
from tavily import AsyncTavilyClient
from tavily.errors import TimeoutError as TavilyTimeout
from tavily.errors import UsageLimitExceededError

from deep_research.config.endpoints import Endpoints, read_endpoints
from deep_research.config.names import LIBRARY_PROVIDER, ConfigError
from deep_research.config.problems import search_provider_problem
from deep_research.runtime.http import tls_context
from deep_research.search import api_call
from deep_research.search.types import (
    MAX_TITLE_CHARS,
    Results,
    SearchError,
    SearchProvider,
    SearchResult,
    Years,
)
from deep_research.text import secrets
from deep_research.text.extract import clip
from deep_research.text.urls import checked_web_url


def _search_error(provider: str, query: str, error: Exception) -> SearchError:
    """Classify a provider library's exception."""
    status = error.response.status_code if isinstance(error, httpx.HTTPStatusError) else None
    rate_limited = status == 429 or isinstance(error, UsageLimitExceededError | RatelimitException)
    transient = (status is not None and status >= 500) or isinstance(
        error, httpx.TransportError | TavilyTimeout | DdgsTimeout
    )
    # httpx's status errors carry a multi-line help text: the status says enough.
    detail = f"HTTP {status}" if status is not None else str(error) or type(error).__name__
    # A search API may quote the key it was sent ("invalid API key tvly-…"); this text goes
    # to the researcher's model, the progress stream and the report's research gaps.
    detail = secrets.redact(detail)
    return SearchError(
        f"{provider} failed for {query!r}: {detail}", transient=transient, rate_limited=rate_limited
    )


class TavilyProvider:
    name = "tavily"
    max_concurrency = 8

    def __init__(self, api_key: str, base_url: str | None) -> None:
        # The library ignores TAVILY_API_BASE_URL, and without a key it silently switches
        # to a keyless mode: both are decided here, explicitly.
        self._client = AsyncTavilyClient(
            api_key=api_key, api_base_url=base_url, client=_tavily_http_client()
        )

    async def search(
        self, query: str, max_results: int, *, years: Years | None = None
    ) -> list[SearchResult]:
        # Its client sends `start_date`/`end_date` (YYYY-MM-DD) when they are given.
        dates: dict[str, str] = {}
        if years is not None and years.first is not None:
            dates["start_date"] = f"{years.first:04d}-01-01"
        if years is not None and years.last is not None:
            dates["end_date"] = f"{years.last:04d}-12-31"
        try:
            response: Any = await self._client.search(query, max_results=max_results, **dates)
        except Exception as error:  # the client raises many unrelated exception types
            raise _search_error(self.name, query, error) from error
        if not isinstance(response, dict):  # Tavily answers a bare string when nothing matched
            return Results()
        return _results(response.get("results", []))


def _tavily_http_client() -> httpx.AsyncClient:
    """The client AsyncTavilyClient would make for itself (its TAVILY_HTTP(S)_PROXY, and
    httpx's own proxy variables otherwise) on the process's TLS context: its own would
    read the CA bundle each search step, 30 ms of the event loop's time."""
    mounts: dict[str, httpx.AsyncBaseTransport] = {
        f"{scheme}://": httpx.AsyncHTTPTransport(proxy=proxy, verify=tls_context())
        for scheme in ("http", "https")
        if (proxy := os.environ.get(f"TAVILY_{scheme.upper()}_PROXY"))
    }
    return httpx.AsyncClient(verify=tls_context(), mounts=mounts or None)


def _results(items: Any, url: str = "url", content: str = "content") -> Results:
    """Each result checked on its own: a malformed one is skipped and counted, the rest kept.

    Tavily, SearXNG and ddgs share a shape (ddgs names the url `href` and the content
    `body`). A number where text belongs is written out; any other type, a missing or
    non-web URL, skips the result.
    """
    kept = []
    items = items if isinstance(items, list) else []
    for item in items:
        result = _result(item, url, content) if isinstance(item, dict) else None
        if result is not None:
            kept.append(result)
    return Results(kept, malformed=len(items) - len(kept))


def _result(item: dict[str, Any], url_key: str, content_key: str) -> SearchResult | None:
    url, title, content = (
        checked_web_url(item.get(url_key)),
        _text(item.get("title")),
        _text(item.get(content_key)),
    )
    if url is None:
        return None
    if title is None or content is None:
        return None
    score = item.get("score")
    return SearchResult(
        url=url,
        title=clip(" ".join(title.split()), MAX_TITLE_CHARS) or url,
        content=content,
        # The provider's own score is informational only: a non-number is dropped, not fatal.
        score=float(score) if _is_number(score) else None,
    )


def _text(value: object) -> str | None:
    """A text field as text: missing is empty, a number is written out, anything else None."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(value) if _is_number(value) else None


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


class SearxngProvider:
    """A self-hosted SearXNG instance, through its JSON API (`format=json` must be enabled)."""

    name = "searxng"
    max_concurrency = 4

    def __init__(self, base_url: str, timeout: float = 20.0) -> None:
        self._url = base_url.rstrip("/") + "/search"
        self._timeout = timeout

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        # Read within api_call's byte cap and deadline, as the scholarly APIs are: an
        # instance (or whatever answers at its address) can send an endless body.
        params = {"q": query, "format": "json"}
        accept = "application/json"
        # The instance is the operator's, on this machine or network: no proxy from the
        # environment stands between (as before its answer was capped).
        body = await api_call.get(
            self.name,
            query,
            self._url,
            params,
            accept=accept,
            timeout=self._timeout,
            trust_env=False,
        )
        return await asyncio.to_thread(_searxng_results, self.name, query, body, max_results)


def _searxng_results(provider: str, query: str, body: bytes, max_results: int) -> Results:
    try:
        payload: Any = json.loads(body)
    except (ValueError, RecursionError) as error:  # not JSON, not UTF-8, or nested past
        # Python's limit: the server's text is not quoted
        raise SearchError(f"{provider} failed for {query!r}: its answer is not JSON") from error
    found = _results(payload.get("results", []) if isinstance(payload, dict) else [])
    return Results(found[:max_results], found.malformed)


class DdgsProvider:
    name = "ddgs"
    max_concurrency = 2  # DuckDuckGo rate-limits quickly

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        try:
            # ddgs is synchronous: keep it off the event loop.
            items = await asyncio.to_thread(DDGS().text, query, max_results=max_results)
        except Exception as error:  # ddgs raises its own and its HTTP backends' errors
            raise _search_error(self.name, query, error) from error
        return _results(items, url="href", content="body")


def resolve_provider(name: str, endpoints: Endpoints | None = None) -> str:
    """The provider `name` stands for (`auto`: tavily with a key, else searxng, else ddgs)."""
    if name != "auto":
        return name
    endpoints = endpoints or read_endpoints()
    return "tavily" if endpoints.tavily_api_key else "searxng" if endpoints.searxng_url else "ddgs"


def make_provider(name: str) -> SearchProvider:
    """The provider for `name` (`auto` resolved by `resolve_provider`)."""
    endpoints = read_endpoints()
    name = resolve_provider(name, endpoints)
    problem = search_provider_problem(name, endpoints)
    if problem:
        raise ConfigError(problem)
    if name == "tavily" and endpoints.tavily_api_key:
        key = endpoints.tavily_api_key.get_secret_value()
        return TavilyProvider(api_key=key, base_url=endpoints.tavily_api_base_url)
    if name == "searxng" and endpoints.searxng_url:
        return SearxngProvider(endpoints.searxng_url)
    if name == "arxiv":
        from deep_research.search.arxiv import ArxivProvider

        return ArxivProvider(endpoints.arxiv_api_url)
    if name == "wikipedia":
        from deep_research.search.wikipedia import WikipediaProvider

        return WikipediaProvider(endpoints.wikipedia_api_url)
    if name == "openalex":
        from deep_research.search.europepmc import full_text_base
        from deep_research.search.openalex import OpenAlexProvider

        return OpenAlexProvider(
            endpoints.openalex_api_url, full_texts=full_text_base(endpoints.europepmc_api_url)
        )
    if name == "europepmc":
        from deep_research.search.europepmc import EuropePmcProvider

        return EuropePmcProvider(endpoints.europepmc_api_url)
    if name == LIBRARY_PROVIDER:
        from deep_research.search.library import LibraryProvider  # Chroma loads only when used

        return LibraryProvider()
    return DdgsProvider()
