"""search/providers.py: Tavily given a range of years sends its client's start and end dates."""

from __future__ import annotations

import pytest

from deep_research.search.providers import TavilyProvider
from deep_research.search.types import Years
from tests.support.fakes.tavily_server import FakeTavilyServer


async def test_tavily_sends_the_range_as_start_and_end_dates_and_nothing_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeTavilyServer() as tavily:
        provider = TavilyProvider("tvly-test", tavily.url)
        await provider.search("heat pumps", 3, years=Years(2019, 2023))
        await provider.search("heat pumps", 3, years=Years(None, 2001))
        await provider.search("heat pumps", 3)
        sent = [(request.get("start_date"), request.get("end_date")) for request in tavily.requests]
    assert sent == [("2019-01-01", "2023-12-31"), (None, "2001-12-31"), (None, None)]
