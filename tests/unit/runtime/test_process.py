"""`runtime/process.py`'s pause between requests to a provider that asks for one."""

from __future__ import annotations

import pytest

from deep_research.runtime import process


def test_each_request_reserves_its_start_after_the_one_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(process.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(process, "_provider_next", {})
    assert process.provider_pause("arxiv", 3.0) == 0.0, "the first goes at once"
    assert process.provider_pause("arxiv", 3.0) == 3.0
    assert process.provider_pause("arxiv", 3.0) == 6.0, "queued behind the reserved one"
    assert process.provider_pause("wikipedia", 3.0) == 0.0, "each provider its own"
    now[0] = 110.0
    assert process.provider_pause("arxiv", 3.0) == 0.0, "a pause long past is not waited"
