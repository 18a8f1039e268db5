"""The real AsyncTavilyClient on the HTTP client we give it: Tavily's own proxy variables,
its key, and no CA bundle read per search step."""

from __future__ import annotations

import pytest

from deep_research.search.providers import make_provider
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.tls import count_ca_bundle_reads


async def test_tavilys_own_proxy_variable_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The API's host does not resolve: only the proxy Tavily's variable names reaches it
    # (an HTTP proxy gets the absolute URL; the fake answers it as its own path).
    with FakeTavilyServer(api_keys={"tvly-proxied"}) as proxy:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-proxied")
        monkeypatch.setenv("TAVILY_API_BASE_URL", "http://api.tavily.invalid")
        monkeypatch.setenv("TAVILY_HTTP_PROXY", proxy.url)
        results = await make_provider("tavily").search("heat pump costs", 3)
    assert results and proxy.queries == ["heat pump costs"]
    assert proxy.auth_headers == ["Bearer tvly-proxied"]


async def test_a_search_step_reads_no_ca_bundle(
    tavily: FakeTavilyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await make_provider("tavily").search("first step", 2)  # the process's TLS context
    loads = count_ca_bundle_reads(monkeypatch)
    for query in ("second step", "third step"):  # each step makes its provider
        assert await make_provider("tavily").search(query, 2)
    assert loads == [], "each search step read the CA bundle again (about 30 ms)"
    assert tavily.auth_headers == ["Bearer tvly-test"] * 3
