"""Web search providers behind one small interface."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ddgs import DDGS
from tavily import AsyncTavilyClient

from deep_research.context import ConfigError, Endpoints

ProviderName = Literal["auto", "tavily", "ddgs"]


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    content: str
    score: float | None = None  # provider relevance on 0-1, when the provider gives one


class SearchError(RuntimeError):
    """A provider failed for one query; the message names the provider and the query."""


class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


class TavilyProvider:
    name = "tavily"

    def __init__(self, api_key: str, base_url: str | None) -> None:
        # The library ignores TAVILY_API_BASE_URL, and without a key it silently switches
        # to a keyless mode: both are decided here, explicitly.
        self._client = AsyncTavilyClient(api_key=api_key, api_base_url=base_url)

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        try:
            response: Any = await self._client.search(query, max_results=max_results)
        except Exception as error:  # the client raises many unrelated exception types
            raise SearchError(f"tavily failed for {query!r}: {error}") from error
        if not isinstance(response, dict):  # Tavily answers a bare string when nothing matched
            return []
        return [
            SearchResult(
                url=item["url"],
                title=item.get("title") or item["url"],
                content=item.get("content") or "",
                score=item.get("score"),
            )
            for item in response.get("results", [])
            if item.get("url")
        ]


class DdgsProvider:
    name = "ddgs"

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        try:
            # ddgs is synchronous: keep it off the event loop.
            items = await asyncio.to_thread(DDGS().text, query, max_results=max_results)
        except Exception as error:  # ddgs raises its own and its HTTP backends' errors
            raise SearchError(f"ddgs failed for {query!r}: {error}") from error
        return [
            SearchResult(url=item["href"], title=item.get("title") or item["href"],
                         content=item.get("body") or "")
            for item in items or []
            if item.get("href")
        ]


def make_provider(name: ProviderName) -> SearchProvider:
    """The provider for `name`; `auto` picks tavily when a key is set, else ddgs."""
    endpoints = Endpoints()
    key = endpoints.tavily_api_key.get_secret_value() if endpoints.tavily_api_key else ""
    if name == "tavily" or (name == "auto" and key):
        if not key:
            raise ConfigError("search_provider='tavily' needs TAVILY_API_KEY in the environment")
        return TavilyProvider(api_key=key, base_url=endpoints.tavily_api_base_url)
    return DdgsProvider()
