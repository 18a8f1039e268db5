"""Nothing paid is lost: a run stopped after its searches were answered reuses them on resume.

Each search request and page fetch is a durable task (runtime/durable.py). The run is
stopped mid-step (a page fetch dies after both of a researcher's searches were answered)
and resumed in the same process or, with the process's hand-overs and caches gone, as a
new one: the search provider sees no query twice, and the report cites the pages found
before the stop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.llm.models import ModelEndpointError
from deep_research.runtime import process
from deep_research.search import cache
from deep_research.search.fetch import Page, PageFetcher
from deep_research.search.types import SearchResult
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


# --- The matrix: each stage × the product's checkpointers × parallel and serial -----------
# A stop at a page read lands inside a step whose searches were answered: only the durable
# calls keep them (these cases fail with runtime/durable.py bypassed). The other stages land
# between or at model calls, and check the resume across checkpointers and concurrency.


def stop_in(stage: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stop the run the first time a request of `stage` reaches the model: the orchestrator's
    first call, alpha's report turn (after its search was answered), or the final report.
    The stop is the model server going away (`ModelEndpointError`, which stops the run from
    inside a researcher too); the resume is then made as a new process would make it."""
    stopped: list[str] = []
    answer = ScriptedChatModel._agenerate

    async def stopping(self: ScriptedChatModel, messages: list[Any], *a: Any, **kw: Any) -> Any:
        tools = set(kw.get("tool_names", []))
        results = [m for m in messages if type(m).__name__ == "ToolMessage"]
        topic = str(messages[1].content) if len(messages) > 1 else ""
        here = {
            "orchestrator": "research" in tools and not results,
            "researcher": "web_search" in tools and topic == "alpha" and bool(results),
            "report": "research" in tools and bool(results),
        }[stage]
        if here and not stopped:
            stopped.append(stage)
            self.calls.append((list(messages), tools))  # it reached the provider
            raise ModelEndpointError("Cannot reach the model server (scripted stop)")
        return await answer(self, messages, *a, **kw)

    monkeypatch.setattr(ScriptedChatModel, "_agenerate", stopping)
    return stopped


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["orchestrator", "researcher", "fetch", "report"])
@pytest.mark.parametrize("saver", ["sqlite", "postgres"])
@pytest.mark.parametrize("config", [{}, {"max_concurrency": 1}], ids=["parallel", "serial"])
async def test_a_run_stopped_at_each_stage_resumes_in_a_new_process_to_a_cited_report(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    tmp_path: Any,
    stage: str,
    saver: str,
    config: dict[str, Any],
) -> None:
    from deep_research.checkpoints import VARIABLE, open_checkpointer

    if saver == "postgres":
        monkeypatch.setenv(VARIABLE, request.getfixturevalue("postgres_dsn"))
    else:
        monkeypatch.delenv(VARIABLE, raising=False)
    model = use_script(
        script_for(orchestrator_fanning_out("alpha", "beta"), lambda m: researcher(m, 2))
    )
    stopped = stop_in(stage, monkeypatch) if stage != "fetch" else []

    async def fetch(self: PageFetcher, url: str) -> Page:
        if stage == "fetch" and "alpha" in url and not stopped:
            stopped.append(stage)  # alpha's searches were answered; a page read stops it
            raise ModelEndpointError("Cannot reach the model server (scripted stop)")
        return Page(url, text=f"The page at {url} says something worth citing.")

    monkeypatch.setattr(PageFetcher, "fetch", fetch)
    run_config = {"configurable": {"thread_id": f"matrix-{stage}"}, **config}
    context = {**NO_CLARIFY, "max_searches_per_run": 6, "fetch_top_n": 1}
    database = tmp_path / "checkpoints.sqlite"
    async with open_checkpointer(sqlite=database) as checkpointer:
        graph = builder.compile(checkpointer=checkpointer)
        with pytest.raises(ModelEndpointError):
            await graph.ainvoke(Q, run_config, context=context, durability="sync")
    assert stopped == [stage]
    answered = list(model.calls)
    # A new process: no hand-overs, no caches; a new connection to the same checkpoints.
    monkeypatch.setattr(process, "_handed", type(process._handed)())
    monkeypatch.setattr(process, "_sent", type(process._sent)())
    monkeypatch.setattr(cache, "_runs", type(cache._runs)())
    async with open_checkpointer(sqlite=database) as checkpointer:
        graph = builder.compile(checkpointer=checkpointer)
        await graph.ainvoke(None, run_config, context=context, durability="sync")
        state = (await graph.aget_state(run_config)).values
    sent = scripted_search.queries
    assert len(sent) == len(set(sent)), f"a query was sent twice: {sent}"
    assert state["searches_used"] <= 6 and len(sent) <= state["searches_used"]
    assert state["status"] == "complete", state["final_report"][:300]
    assert any("alpha" in s["url"] for s in state["sources"])
    # Only what the stop cut off is asked again: the stopped call, and at most a sibling
    # researcher's call the scripted model answered in the instant the step died.
    asked = [tuple(str(m.content) for m in messages) for messages, _ in model.calls]
    repeated = len(asked) - len(set(asked))
    assert repeated <= (1 if config else 2), (repeated, len(answered))


async def test_a_research_task_failing_mid_search_keeps_what_its_step_may_have_sent(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A step's counts are written when it returns. alpha's search step sends its searches,
    then fails (contained: the run goes on without alpha); giving back its whole share would
    let later turns send more searches than the cap."""
    use_script(script_for(orchestrator_fanning_out("alpha", "beta"), lambda m: researcher(m, 2)))

    async def fetch(self: PageFetcher, url: str) -> Page:
        if "alpha" in url:
            raise RuntimeError("a page reader bug")  # after alpha's searches were answered
        return Page(url, text=f"The page at {url} says something worth citing.")

    monkeypatch.setattr(PageFetcher, "fetch", fetch)
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "failing"}}
    context = {**NO_CLARIFY, "max_searches_per_run": 6, "fetch_top_n": 1}
    await graph.ainvoke(Q, run_config, context=context, durability="sync")
    state = (await graph.aget_state(run_config)).values
    assert [f["topic"] for f in state["failures"]] == ["alpha"]
    sent = scripted_search.queries
    assert any(q.startswith("alpha") for q in sent), "alpha's searches went out"
    assert state["searches_used"] >= len(sent), (state["searches_used"], sent)
    assert state["searches_used"] <= 6


async def test_a_report_answered_before_a_stop_is_not_asked_again_though_refenced(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The report's prompt fences the findings with a new random nonce each time it is
    built: the re-run's request is the same call all the same, and its saved answer is used."""
    from deep_research.nodes import report_writer

    model = use_script(script_for(orchestrator_fanning_out("alpha"), lambda m: researcher(m, 1)))
    write = report_writer.write_report
    stopped: list[bool] = []

    async def answered_then_stopped(*args: Any) -> Any:
        reply = await write(*args)
        if not stopped:
            stopped.append(True)
            raise Crash()  # the answer is saved; the step dies before it returns
        return reply

    monkeypatch.setattr(report_writer, "write_report", answered_then_stopped)
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "refenced"}}
    context = {**NO_CLARIFY, "max_orchestrator_turns": 2, "fetch_top_n": 1}
    with pytest.raises(Crash):
        await graph.ainvoke(Q, run_config, context=context, durability="sync")
    asked = len(model.calls)
    await graph.ainvoke(None, run_config, context=context, durability="sync")
    state = (await graph.aget_state(run_config)).values
    assert state["final_report"]
    assert len(model.calls) == asked, "the report's answer was saved: not asked again"


async def test_a_paper_s_page_read_in_place_of_its_failed_pdf_is_kept_across_a_stop(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The PDF's failed fetch is answered before the stop, so the resume does not fetch it
    again; the page read in its place, in flight at the stop, is read once more and cited."""
    use_script(script_for(orchestrator_fanning_out("alpha"), lambda m: researcher(m, 2)))
    found = ScriptedSearch.search

    async def papers(self: ScriptedSearch, query: str, n: int) -> list[SearchResult]:
        return [replace(r, pdf_url=f"{r.url}.pdf") for r in await found(self, query, n)]

    fetched: list[str] = []

    async def fetch(self: PageFetcher, url: str) -> Page:
        fetched.append(url)
        if url.endswith(".pdf"):
            return Page(url, skipped="HTTP 403")
        if fetched.count(url) == 1 and "alpha-q1/" in url:
            raise Crash()  # the second query's page, read after both PDFs failed
        return Page(url, text=f"The page at {url} says something worth citing.")

    monkeypatch.setattr(ScriptedSearch, "search", papers)
    monkeypatch.setattr(PageFetcher, "fetch", fetch)
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "papers"}}
    context = {**NO_CLARIFY, "max_searches_per_run": 4, "fetch_top_n": 1}
    with pytest.raises(Crash):
        await graph.ainvoke(Q, run_config, context=context, durability="sync")
    pdfs, pages = fetched[:2], fetched[2:]
    assert [url.removesuffix(".pdf") for url in pdfs] == pages, "each PDF, then its page"
    assert all(url.endswith(".pdf") for url in pdfs) and "alpha-q1/" in pages[1]
    monkeypatch.setattr(process, "_handed", type(process._handed)())
    monkeypatch.setattr(cache, "_runs", type(cache._runs)())
    await graph.ainvoke(None, run_config, context=context, durability="sync")
    assert fetched[4:] == [pages[1]], "only the read in flight at the stop is made again"
    state = (await graph.aget_state(run_config)).values
    assert scripted_search.queries == ["alpha q0", "alpha q1"]
    assert all(url in state["final_report"] for url in pages)
    by_url = {s["url"]: s["content"] for s in state["sources"]}
    assert all("says something worth citing" in by_url[url] for url in pages)
