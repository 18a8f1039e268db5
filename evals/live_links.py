"""Optional live link check: do the cited pages answer? Off by default; needs the internet."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx

from evals.evaluators import Score, cited_urls

TIMEOUT_SECONDS = 15.0
MAX_PARALLEL = 8


async def _status(client: httpx.AsyncClient, url: str, slots: asyncio.Semaphore) -> str | None:
    """None when the page answers below 400; otherwise what went wrong."""
    async with slots:
        try:
            # GET, not HEAD: many sites answer HEAD with 403/405 for pages that work.
            async with client.stream("GET", url) as response:
                return None if response.status_code < 400 else f"HTTP {response.status_code}"
        except httpx.HTTPError as error:
            return f"{type(error).__name__}: {error}"


async def live_links(outputs: Mapping[str, Any]) -> Score:
    """Share of cited URLs that answer with a status below 400."""
    urls = cited_urls(outputs)
    if not urls:
        return Score(key="live_links", score=None, comment="no citations")
    slots = asyncio.Semaphore(MAX_PARALLEL)
    async with httpx.AsyncClient(follow_redirects=True, timeout=TIMEOUT_SECONDS) as client:
        problems = await asyncio.gather(*(_status(client, url, slots) for url in urls))
    broken = [f"{url} ({problem})" for url, problem in zip(urls, problems, strict=True) if problem]
    comment = "; ".join(broken) if broken else f"all {len(urls)} cited pages answered"
    return Score(key="live_links", score=1 - len(broken) / len(urls), comment=comment)
