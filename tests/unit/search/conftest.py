"""The fetch and netguard tests' page server (no name, nothing allowed) and DNS table."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fakes.page_server import PageServer
from tests.support.fetching import Resolver, dns_table


@pytest.fixture
def bare_pages() -> Iterator[PageServer]:
    """The page server as it is: no host name mapped to it and none allowed by the environment."""
    with PageServer() as server:
        yield server


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Resolver:
    return dns_table(monkeypatch)
