"""search/api_call.py: Retry-After read safely, statuses classified, the deadline held."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from deep_research.search import api_call
from deep_research.search.types import SearchError
from tests.support.fakes.http_server import BackgroundServer, closed_port


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("5", 5.0),
        ("Thu, 01 Jan 1970 00:00:30 GMT", 20.0),
        ("Thu, 01 Jan 1970 00:00:01 GMT", 0.0),
        (None, None),
        ("-3", None),
        ("²", None),
        ("５", None),
        ("soon", None),
        ("9" * 100, None),
        ("Thu, 01 Jan 1970 00:00:30", None),
    ],
)
def test_retry_after_is_seconds_or_a_date_and_nothing_else(
    header: str | None, seconds: float | None
) -> None:
    assert api_call.retry_after(header, now=10.0) == seconds


def _app(status: int, delay: float = 0.0) -> web.Application:
    async def answer(request: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        return web.Response(status=status, text="SECRET server words")

    app = web.Application()
    app.router.add_get("/api", answer)
    return app


@pytest.mark.parametrize(
    ("status", "transient", "rate_limited"),
    [(500, True, False), (429, False, True), (404, False, False)],
)
async def test_a_status_is_classified_and_its_body_never_quoted(
    status: int, transient: bool, rate_limited: bool
) -> None:
    with BackgroundServer(_app(status)) as server:
        with pytest.raises(SearchError, match=f"HTTP {status}") as raised:
            await api_call.get("src", "q", server.url + "/api", {}, accept="*/*")
    error = raised.value
    assert (error.transient, error.rate_limited) == (transient, rate_limited)
    assert "SECRET" not in str(error)


async def test_a_silent_server_and_a_closed_port_are_transient_failures() -> None:
    with BackgroundServer(_app(200, delay=5.0)) as server:
        with pytest.raises(SearchError, match="no answer within 0.3 s") as raised:
            await api_call.get("src", "q", server.url + "/api", {}, accept="*/*", timeout=0.3)
    assert raised.value.transient
    url = f"http://127.0.0.1:{closed_port()}/api"
    with pytest.raises(SearchError, match="ConnectError") as raised:
        await api_call.get("src", "q", url, {}, accept="*/*")
    assert raised.value.transient
