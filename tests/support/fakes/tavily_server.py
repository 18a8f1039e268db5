"""A fake Tavily Search API for ``tavily.AsyncTavilyClient(api_base_url=srv.url)``.

The real client sends ``POST {api_base_url}/search`` with a JSON body (``query``,
``max_results``, ...) and ``Authorization: Bearer <key>``; it expects a JSON object
with a ``results`` list of ``{url, title, content, score, raw_content}`` items.
A corpus may return results of any shape (hostile tests); missing fields are filled in.
Non-200 statuses make it raise (HTTP 500 -> ``httpx.HTTPStatusError``). Given
``api_keys``, any other key is answered 401, as Tavily answers an invalid key (the client
raises ``InvalidAPIKeyError``); without it every key is accepted. With ``echo_key`` that
401 quotes the key it was sent, as careless APIs and proxies do.
"""

from __future__ import annotations

import asyncio
import re
import threading
import uuid
from collections.abc import Callable
from typing import Any

from aiohttp import web

from .http_server import JsonApiServer

Corpus = Callable[[str, int], list[Any]]  # results: dicts, or anything a hostile API sends

FAIL_MARKER = "FAIL_SEARCH"
DEFAULT_MAX_RESULTS = 5


def slugify(text: str, max_len: int = 60) -> str:
    """Lower-case, hyphen-separated ASCII slug of ``text`` ("query" if empty)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:max_len].rstrip("-") or "query"


def topic_corpus(query: str, max_results: int) -> list[dict[str, Any]]:
    """Deterministic results for ``query``; scores are 0.9, 0.75, 0.6, ... (floor 0.01)."""
    slug = slugify(query)
    results: list[dict[str, Any]] = []
    for i in range(max(0, max_results)):
        results.append(
            {
                "url": f"https://example.org/{slug}/{i}",
                "title": f"{query} - source {i + 1}",
                "content": (
                    f"Source {i + 1} explains key facts about {query}. "
                    f"It also gives background and figures on {query}."
                ),
                "score": max(round(0.9 - 0.15 * i, 2), 0.01),
            }
        )
    return results


class FakeTavilyServer(JsonApiServer):
    """Fake Tavily backend; use as ``with FakeTavilyServer() as srv``."""

    def __init__(
        self,
        corpus: Corpus = topic_corpus,
        api_keys: set[str] | None = None,
        echo_key: bool = False,
    ) -> None:
        self.corpus = corpus
        self.api_keys = api_keys
        self.echo_key = echo_key
        self._returned_urls: set[str] = set()
        self._hold_marker: str | None = None
        self.held = threading.Event()  # set when a held search has arrived
        self._released: asyncio.Event | None = None
        app = web.Application()
        app.router.add_post("/search", self._search)
        super().__init__(app)

    @property
    def queries(self) -> list[str]:
        return [str(body.get("query", "")) for body in self.requests]

    @property
    def returned_urls(self) -> set[str]:
        """Snapshot of every result URL the server has handed out."""
        with self._lock:
            return set(self._returned_urls)

    def hold(self, marker: str) -> threading.Event:
        """Keep every search whose query contains `marker` open until `release()`."""
        self._hold_marker = marker
        return self.held

    def release(self) -> None:
        self._hold_marker = None
        if self._released is not None:
            self.loop.call_soon_threadsafe(self._released.set)

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self._returned_urls.clear()

    async def _search(self, request: web.Request) -> web.Response:
        body = await self._receive(request)
        query = str(body.get("query", ""))
        if self._hold_marker is not None and self._hold_marker in query:
            self._released = self._released or asyncio.Event()
            self.held.set()
            await self._released.wait()
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if self.api_keys is not None and key not in self.api_keys:
            quoted = f" {key!r}" if self.echo_key else ""
            return _error(401, f"Unauthorized: missing or invalid API key{quoted}.")
        if FAIL_MARKER in query:
            return _error(500, f"simulated search failure for {query!r}")
        max_results = int(body.get("max_results") or DEFAULT_MAX_RESULTS)
        try:
            found = self.corpus(query, max_results)[:max_results]
        except Exception as exc:  # surface corpus bugs as a server error
            return _error(500, f"corpus raised {type(exc).__name__}: {exc}")
        raw = bool(body.get("include_raw_content"))
        # Each result as the corpus wrote it (a hostile corpus may give any shape), with
        # Tavily's fields filled in where it left them out.
        results = [
            {
                "title": "",
                "content": "",
                "score": 0.5,
                **r,
                "raw_content": r.get("raw_content", r.get("content")) if raw else None,
            }
            if isinstance(r, dict)
            else r
            for r in found
        ]
        with self._lock:
            self._returned_urls.update(
                r["url"] for r in results if isinstance(r, dict) and isinstance(r.get("url"), str)
            )
        payload = {
            "query": query,
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": results,
            "response_time": 0.01,
            "request_id": uuid.uuid4().hex,
        }
        return web.json_response(payload)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"detail": {"error": message}}, status=status)
