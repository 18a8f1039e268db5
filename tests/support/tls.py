"""Counting CA-bundle reads: each is about 30 ms of a client's construction."""

from __future__ import annotations

import ssl
from typing import Any

import pytest


def count_ca_bundle_reads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """From now on, every `load_verify_locations` call (a TLS context reading its CA
    bundle) is appended to the returned list."""
    reads: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        reads.append(args or kwargs)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    return reads
