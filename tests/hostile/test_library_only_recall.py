"""Threat: web-derived text in research promised to use the user's documents alone. With
`search_provider=library`, recall offers only earlier reports made from the library alone:
an earlier web report on the same question (or one stored without its provider, by an older
version or another client) is never put in the orchestrator's prompt, and the user is told.
Real Chroma and real MiniLM, as the memory tests use."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from deep_research.memory import REPORTS_COLLECTION, Piece, open_store
from deep_research.memory.research import remember
from deep_research.nodes.planning import earlier_reports
from deep_research.nodes.recall import recall
from deep_research.runtime import progress
from deep_research.runtime.progress_lines import memory_notice

QUESTION = "How well do heat pumps work in cold climates?"
WEB_REPORT = (
    "# Heat pumps in the cold\n\nWEB-DERIVED: a field test found [this](https://web.example/a)."
)
LIBRARY_REPORT = "# Heat pumps in the cold\n\nFROM-DOCUMENTS: the user's own survey found this."


async def remember_both(*, with_library: bool = True) -> None:
    store = await open_store()
    await remember(
        store,
        thread_id="web-thread",
        question=QUESTION,
        report=WEB_REPORT,
        cited=[],
        search_provider="tavily",
    )
    # Stored without a provider, as before it was kept: it may have used the web.
    await store.put(
        REPORTS_COLLECTION,
        "old-thread:key",
        [
            Piece(
                QUESTION,
                {
                    "thread": "old-thread",
                    "question": QUESTION,
                    "date": "2026-01-01",
                    "ts": 0.0,
                    "excerpt": "OLD-UNKNOWN: from before providers were kept",
                },
            )
        ],
    )
    if with_library:
        await remember(
            store,
            thread_id="library-thread",
            question=QUESTION,
            report=LIBRARY_REPORT,
            cited=[],
            search_provider="library",
        )


async def recalled(
    monkeypatch: pytest.MonkeyPatch, provider: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    monkeypatch.setenv("USE_MEMORY", "true")
    monkeypatch.setenv("SEARCH_PROVIDER", provider)
    events: list[dict[str, Any]] = []
    monkeypatch.setattr(progress, "emit", lambda event, **fields: events.append(fields))
    update = await recall({"messages": [HumanMessage(QUESTION)]}, None)  # type: ignore[arg-type]
    return update, events


async def test_library_research_recalls_only_reports_made_from_the_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await remember_both()
    update, [event] = await recalled(monkeypatch, "library")
    assert [r["thread_id"] for r in update["earlier_reports"]] == ["library-thread"]
    prompt = earlier_reports(update)  # type: ignore[arg-type]
    assert "FROM-DOCUMENTS" in prompt
    assert (
        "WEB-DERIVED" not in prompt and "web.example" not in prompt and "OLD-UNKNOWN" not in prompt
    )
    notice = memory_notice({"event": "memory", **event})
    assert notice is not None and "from your documents alone" in notice

    # Web research is offered all three, as before.
    update, _ = await recalled(monkeypatch, "ddgs")
    threads = {r["thread_id"] for r in update["earlier_reports"]}
    assert threads == {"web-thread", "old-thread", "library-thread"}


async def test_with_only_web_reports_library_research_recalls_none_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await remember_both(with_library=False)
    update, [event] = await recalled(monkeypatch, "library")
    assert update["earlier_reports"] == []
    notice = memory_notice({"event": "memory", **event})
    assert notice == "memory: only reports made from your documents alone are recalled"
