"""The real page fetcher against the local page server, for the fetch and netguard tests."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import pytest

from deep_research.search import netguard
from deep_research.search.browser import Renderer, find_browser
from deep_research.search.fetch import PageFetcher
from deep_research.search.netguard import AddressPolicy
from tests.support.fakes.page_server import PageServer
from tests.support.search import ALLOW_PAGES, PAGES_HOST

Resolver = Callable[[dict[str, list[str]]], list[str]]


def dns_table(monkeypatch: pytest.MonkeyPatch) -> Resolver:
    """Install a DNS table at the guard's resolver boundary; returns the log of names asked."""
    asked: list[str] = []

    def install(table: dict[str, list[str]]) -> list[str]:
        offline = netguard.resolve

        async def resolve(host: str, port: int) -> list[netguard.IPAddress]:
            asked.append(host)
            if host in table:
                return [ipaddress.ip_address(a) for a in table[host]]
            return await offline(host, port)

        monkeypatch.setattr(netguard, "resolve", resolve)
        return asked

    return install


def named(pages: PageServer, path: str) -> str:
    return f"http://{PAGES_HOST}:{pages.port}{path}"


async def fetch(
    url: str,
    policy: AddressPolicy = ALLOW_PAGES,
    renderer: Renderer | None = None,
    **options: float,
) -> object:
    settings = {"timeout": 5.0, "max_chars": 20_000, **options}
    async with PageFetcher(policy, renderer=renderer, **settings) as fetcher:  # type: ignore[arg-type]
        return await fetcher.fetch(url)


def renderer(policy: AddressPolicy = ALLOW_PAGES, **options: float) -> Renderer:
    """A renderer of the system's Chromium (2 pages, 20 s each unless `options` say)."""
    browser = find_browser(None)
    assert browser is not None, "no Chromium on PATH"
    settings = {"max_pages": 2, "timeout": 20.0, **options}
    return Renderer(
        policy, browser=browser, max_pages=int(settings["max_pages"]), timeout=settings["timeout"]
    )
