"""`relevance.score_results` awaits the model's thread: a search cancelled while its
texts wait there is never computed, and the thread goes on with the others."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any

import pytest

from deep_research import embedding
from deep_research.search import relevance
from deep_research.search.types import SearchResult


def _results(word: str) -> list[SearchResult]:
    return [SearchResult(f"https://example.org/{word}", f"{word} title", f"{word} text", None)]


async def test_a_search_cancelled_while_its_texts_wait_is_never_computed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = embedding.embedder()
    monkeypatch.setattr(model, "_cache", OrderedDict())
    busy, release = threading.Event(), threading.Event()
    computed: list[str] = []
    real = model._compute

    def gated(texts: list[str]) -> object:
        computed.extend(texts)
        if "busy query" in texts:
            busy.set()
            release.wait(30)
        return real(texts)

    monkeypatch.setattr(model, "_compute", gated)
    queued = asyncio.Event()
    real_submit = model.submit

    def submit(texts: list[str], **kwargs: Any) -> Any:
        future = real_submit(texts, **kwargs)
        if "given up" in texts:
            queued.set()  # on the loop: score_results calls it there
        return future

    monkeypatch.setattr(model, "submit", submit)
    first = asyncio.create_task(relevance.score_results("busy query", _results("busy")))
    assert await asyncio.to_thread(busy.wait, 30)
    cancelled = asyncio.create_task(relevance.score_results("given up", _results("gone")))
    await queued.wait()  # its texts wait behind the busy pass
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    release.set()
    async with asyncio.timeout(60):  # a thread that died with the cancelled request: fail
        assert len(await first) == 1
        assert len(await relevance.score_results("later query", _results("later"))) == 1
    assert "given up" not in computed and "later query" in computed


async def test_a_pass_out_of_memory_keeps_the_results_unfiltered_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """numpy's MemoryError in the model's pass (a machine short of memory) is the model's
    failure, as onnxruntime's is: the search keeps its results, the run is told."""
    model = embedding.embedder()
    monkeypatch.setattr(model, "_cache", OrderedDict())

    def out_of_memory(texts: list[str]) -> object:
        raise MemoryError("Unable to allocate 1.50 GiB for an array")

    monkeypatch.setattr(model, "_compute", out_of_memory)
    seen: list[dict[str, object]] = []
    monkeypatch.setattr(relevance.progress, "emit", lambda e, **f: seen.append({"e": e, **f}))
    results = _results("heat") + _results("pumps")
    assert await relevance.scores_or_kept("heat pumps", results, "r1") == [1.0, 1.0]
    assert seen == [
        {
            "e": "relevance_off",
            "id": "r1",
            "reason": "the model ran out of memory in a pass over 3 texts",
        }
    ]
    monkeypatch.undo()  # the same thread computes the next pass
    assert len(await relevance.score_results("heat pumps", results)) == 2
