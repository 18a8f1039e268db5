"""Nothing paid is lost: a run stopped after its searches were answered reuses them on resume.

Each search request and page fetch is a durable task (runtime/durable.py). The run is
stopped mid-step (a page fetch dies after both of a researcher's searches were answered)
and resumed in the same process or, with the process's hand-overs and caches gone, as a
new one: the search provider sees no query twice, and the report cites the pages found
before the stop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.runtime import process
from deep_research.search import cache
from deep_research.search.fetch import Page, PageFetcher
from tests.support.graph_scripts import (
    NO_CLARIFY,
    orchestrator_fanning_out,
    researcher,
    script_for,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

Q = {"messages": [{"role": "user", "content": "q"}]}


class Crash(BaseException):
    """Stands in for the process dying mid-step: nothing in the graph catches it."""


@pytest.mark.parametrize("config", [{}, {"max_concurrency": 1}], ids=["parallel", "serial"])
@pytest.mark.parametrize("new_process", [False, True], ids=["same-process", "new-process"])
async def test_searches_answered_before_a_stop_are_reused_and_cited(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
    new_process: bool,
    config: dict[str, Any],
) -> None:
    model = use_script(
        script_for(orchestrator_fanning_out("alpha", "beta"), lambda m: researcher(m, 2))
    )
    fetched: list[str] = []

    async def fetch(self: PageFetcher, url: str) -> Page:
        if "alpha" in url and not fetched:
            fetched.append(url)
            raise Crash()  # alpha's searches were answered; its step dies reading a page
        return Page(url, text=f"The page at {url} says something worth citing.")

    monkeypatch.setattr(PageFetcher, "fetch", fetch)
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "durable"}, **config}
    context = {**NO_CLARIFY, "max_searches_per_run": 6, "fetch_top_n": 1}
    with pytest.raises(Crash):
        await graph.ainvoke(Q, run_config, context=context, durability="sync")
    alpha_sent = [q for q in scripted_search.queries if q.startswith("alpha")]
    assert len(alpha_sent) == 2, "both of alpha's searches were answered before the stop"
    calls_before = len(model.calls)
    if new_process:  # what another process resuming the thread would have
        monkeypatch.setattr(process, "_handed", type(process._handed)())
        monkeypatch.setattr(cache, "_runs", type(cache._runs)())
    await graph.ainvoke(None, run_config, context=context, durability="sync")
    state = (await graph.aget_state(run_config)).values
    sent = scripted_search.queries
    assert len(sent) == len(set(sent)) == 4, f"a query was sent twice: {sent}"
    assert state["searches_used"] == 4
    cited = {s["url"] for s in state["sources"] if "alpha" in s["url"]}
    assert cited and all(url in state["final_report"] for url in cited)
    assert "says something worth citing" in " ".join(s["content"] for s in state["sources"])
    # Only what the stop cut off is asked again: at most the sibling researcher's call,
    # which was in flight (the scripted model answers in the same instant the step dies).
    asked = [tuple(str(m.content) for m in messages) for messages, _ in model.calls]
    assert len(asked) - len(set(asked)) <= (0 if config else 1), "answered calls were sent again"
    assert len(model.calls) > calls_before
