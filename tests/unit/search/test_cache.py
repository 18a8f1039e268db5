"""search/cache.py: its keys, and OnceMap/run_cache beyond the pipeline test's sharing."""

from __future__ import annotations

import asyncio

import pytest

from deep_research.search import cache
from deep_research.search.cache import OnceMap, Searched, query_key, run_cache, url_key
from deep_research.text.urls import page_key


def test_queries_differing_in_case_and_spacing_are_one_search() -> None:
    assert query_key("Heat  PUMPS\tcost\n", 5) == query_key(" heat pumps cost", 5)
    assert query_key("Straße", 5) == query_key("STRASSE", 5), "casefold, not lower"
    assert query_key("heat pumps", 5) != query_key("heat pumps", 6)
    assert query_key("heat pumps", 5) != query_key("heatpumps", 5)
    huge = "x " * 50_000 + "\x00\u202e"
    assert query_key(huge, 1) == query_key(huge.upper(), 1)


def test_url_keys_are_page_keys_and_a_pdf_is_fetched_once_for_all_its_pages() -> None:
    for url in ["https://A.example:443/p/?utm_source=x#f", "file:///tmp/a.pdf", "not a url"]:
        assert url_key(url) == page_key(url)
    pdf = "https://a.example/r.pdf"
    assert url_key(f"{pdf}#page=2") == url_key(f"{pdf}#page=3") == url_key(pdf) == page_key(pdf)
    assert page_key(f"{pdf}#page=2") != page_key(pdf)


async def test_a_cancelled_asker_leaves_the_shared_work_running() -> None:
    once: OnceMap[str] = OnceMap()
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        return "done"

    first = asyncio.ensure_future(once.get("k", work))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(once.get("k", work))
    await asyncio.sleep(0)
    first.cancel()
    gate.set()
    assert await second == ("done", False)
    assert "k" in once and len(once) == 1 and "other" not in once


async def test_cancelled_work_is_forgotten_so_the_next_asker_starts_again() -> None:
    once: OnceMap[str] = OnceMap()

    async def never() -> str:
        await asyncio.Event().wait()
        return "never"

    asker = asyncio.ensure_future(once.get("k", never))
    await asyncio.sleep(0)
    once._tasks["k"].cancel()  # the work itself, not the asker
    with pytest.raises(asyncio.CancelledError):
        await asker
    assert "k" not in once

    async def again() -> str:
        return "again"

    assert await once.get("k", again) == ("again", True)


def test_a_run_cache_belongs_to_one_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "_runs", type(cache._runs)())

    async def get() -> cache.RunCache:
        return run_cache("thread")

    first, second = asyncio.run(get()), asyncio.run(get())
    assert first is not second, "tasks of a closed loop cannot be awaited"
    assert len(cache._runs) == 1


def test_a_searched_answer_starts_without_scores_or_notes() -> None:
    searched = Searched([])
    assert searched.relevance == [] and searched.notes == [] and searched.provider == ""
    assert Searched([]).notes is not searched.notes
