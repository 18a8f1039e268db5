"""A fake SearXNG JSON API: ``GET /search?q=...&format=json``.

Queries containing FAIL_SEARCH get HTTP 500, RATE_LIMIT gets 429, NO_RESULTS gets an
empty list, FLOOD an endless JSON body (cut off at 64 MB), NOT_JSON a page of HTML, NESTED
JSON nested 200,000 deep.
Result scores are unbounded, as SearXNG's are. ``json_format=False`` plays an
instance whose settings.yml does not enable the JSON format: every request gets 403.
A `corpus` (query -> results, any shape) replaces the default results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from .http_server import BackgroundServer
from .tavily_server import slugify


class FakeSearxngServer(BackgroundServer):
    def __init__(
        self,
        json_format: bool = True,
        corpus: Callable[[str], list[Any]] | None = None,
    ) -> None:
        self.json_format = json_format
        self.corpus = corpus
        self._queries: list[str] = []
        app = web.Application()
        app.router.add_get("/search", self._search)
        super().__init__(app)

    @property
    def queries(self) -> list[str]:
        return self._snapshot(self._queries)

    async def _search(self, request: web.Request) -> web.StreamResponse:
        query = request.query.get("q", "")
        with self._lock:
            self._queries.append(query)
        if request.query.get("format") != "json" or not self.json_format:
            return web.Response(status=403, text="format not allowed")
        if "RATE_LIMIT" in query:
            return web.Response(status=429, text="too many requests")
        if "FAIL_SEARCH" in query:
            return web.Response(status=500, text="engine crashed")
        if "NESTED" in query:
            return web.Response(body=b"[" * 200_000, content_type="application/json")
        if "NOT_JSON" in query:
            return web.Response(text="<html>maintenance</html>", content_type="text/html")
        if "FLOOD" in query:
            return await self._flood(request)
        slug = slugify(query)
        results: list[Any] = [
            {
                "url": f"https://searx.example/{slug}/{i}",
                "title": f"{query} - searx result {i}",
                "content": f"SearXNG result {i} explains {query}.",
                "engine": "fake",
                "score": 4.5 - i,
            }
            for i in range(3)
        ]
        if self.corpus is not None:
            results = self.corpus(query)
        elif "NO_RESULTS" in query:
            results = []
        return web.json_response({"query": query, "number_of_results": 3, "results": results})

    async def _flood(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"results": [' + b'{"url": "https://a.example/", "title": "x"},')
        chunk = b" " * 65_536
        try:
            for _ in range(1_024):  # 64 MB, far past any cap; the client hangs up first
                await response.write(chunk)
        except (ConnectionResetError, RuntimeError):  # aiohttp's ways of saying "gone"
            pass
        return response
