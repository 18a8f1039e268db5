"""`memory.prepare`: when a research task comes back, memory's slow parts start on a thread
of their own, and the report is embedded as soon as the orchestrator writes it, so
`remember` embeds nothing (its edges: test_memory_prepare_edges.py)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from deep_research import embedding
from deep_research.citations import check_report
from deep_research.memory import (
    PASSAGES_COLLECTION,
    REPORTS_COLLECTION,
    Location,
    chunks,
    open_store,
    preparing,
    research,
)
from deep_research.state import Source
from tests.support.graph_scripts import orchestrator_fanning_out, script_for
from tests.support.memory_prepare import (
    MEMORY_ON,
    PREPARE,
    QUESTION,
    join_prepare,
    run,
    watch_target,
    world,
)
from tests.support.scripted_model import ScriptedChatModel

__all__ = ["world"]  # the fixture the tests use


def cited_pages(values: dict[str, Any]) -> list[research.CitedPage]:
    return [
        research.CitedPage(source.url, source.title, source.texts, source.retrieved_on)
        for source in check_report(values["final_report"], values["sources"]).cited
    ]


@pytest.mark.slow
@pytest.mark.usefixtures("world")
async def test_remember_embeds_nothing_the_pages_and_report_were_embedded_as_they_came(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = embedding.embedder()
    monkeypatch.setattr(model, "_cache", OrderedDict())  # no other test's vectors
    computed: list[tuple[str, str]] = []  # (thread, text), in the order they were computed
    real_compute = model._compute

    def recording(texts: list[str]) -> Any:
        computed.extend((threading.current_thread().name, text) for text in texts)
        return real_compute(texts)

    monkeypatch.setattr(model, "_compute", recording)
    prepared: list[tuple[bool, int]] = []  # (background, texts) of each request prepare makes
    real_submit = model.submit

    def watched_submit(texts: Any, *, background: bool = False) -> Any:
        if threading.current_thread().name == PREPARE:
            prepared.append((background, len(texts)))
        return real_submit(texts, background=background)

    monkeypatch.setattr(model, "submit", watched_submit)
    # The scripted orchestrator writes at once; a real model takes longer than preparing.
    remembered_from: list[int] = []
    real_remember = research.remember

    ready: list[str] = []  # the collections whose handles `remember` found made

    async def remember_after_the_model(store: Any, *args: Any, **kwargs: Any) -> int:
        await asyncio.to_thread(join_prepare)
        remembered_from.append(len(computed))
        ready.extend(store._collections)
        return await real_remember(store, *args, **kwargs)

    monkeypatch.setattr(research, "remember", remember_after_the_model)
    ran, raised = watch_target(monkeypatch)

    values, _ = await run(MEMORY_ON)

    assert ran == [PREPARE] and raised == []
    pages = cited_pages(values)
    assert len(pages) == 2
    page_texts = {text for page in pages for text in research.page_chunks(page)}
    assert page_texts
    (start,) = remembered_from
    for text in page_texts:
        # Computed once, on the model's thread, before `remember` began: for `prepare`.
        (index,) = [i for i, (_, t) in enumerate(computed) if t == text]
        assert index < start and computed[index][0] == "minilm", text[:60]
    # Small background requests: a search scoring meanwhile is never stuck behind a page.
    assert prepared and all(
        background and 0 < size <= preparing.PREPARED_PER_PASS for background, size in prepared
    ), prepared
    by_remember = {text for _, text in computed[start:]}
    report_texts = set(chunks.report_chunks(values["final_report"]))
    # The report too, as `finalize` started to check it: the published report has the same
    # pieces, and `remember` computes none of them.
    assert report_texts and report_texts <= {text for _, text in computed[:start]}
    # And the question, the report's first piece: `remember` computes nothing at all.
    assert QUESTION in {text for _, text in computed[:start]} and by_remember == set()
    # Nor does it make the collections' handles (langchain-chroma's import, Chroma's calls).
    assert {REPORTS_COLLECTION, PASSAGES_COLLECTION} <= set(ready)
    # What was prepared is what was stored: every cited page, all its chunks.
    store = await open_store(Location(path=Path(os.environ["MEMORY_DIR"])))
    stored = await store.items(PASSAGES_COLLECTION)
    assert {str(hit.metadata["url"]) for hit in stored} == {page.url for page in pages}
    assert {hit.text for hit in stored} == page_texts


@pytest.mark.usefixtures("world")
async def test_each_research_task_prepares_its_report_before_the_report_is_written(
    monkeypatch: pytest.MonkeyPatch, use_script: Callable[..., ScriptedChatModel]
) -> None:
    order: list[str] = []
    orchestrator = orchestrator_fanning_out("heat pumps in the cold", "heat pump prices")

    def writing(messages: list[BaseMessage]) -> AIMessage:
        reply = orchestrator(messages)
        order.extend([] if reply.tool_calls else ["report"])
        return reply

    use_script(script_for(writing))
    prepared: list[str] = []

    def watched_prepare(given: list[str], sources: list[Source], context: Any) -> None:
        assert context.use_memory and sources
        prepared.extend(given)
        order.append("prepare")  # recorded only: the store is another test's

    monkeypatch.setattr(preparing, "prepare", watched_prepare)

    values, _ = await run(MEMORY_ON)

    results = [m for m in values["messages"] if isinstance(m, ToolMessage) and m.name == "research"]
    assert sorted(prepared) == sorted(m.text for m in results) and len(results) == 2
    assert order == ["prepare", "prepare", "report"]
