"""Nothing but the model on the critical path, and no page text read twice.

The relevance model starts loading when a run starts (before the first search needs it),
page extraction has threads of its own, and a researcher's second search names the pages
its first one already gave it instead of sending their text again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from deep_research import embedding
from deep_research.embedding import loader
from deep_research.memory import open as memory_open
from deep_research.runtime import process
from deep_research.search.fetch import PageFetcher
from deep_research.text import extract
from tests.support.fakes.page_server import PageServer
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    run,
    script_for,
    tool_results,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ALLOW_PAGES, PAGES_HOST, SamePages


def twice(messages: list[BaseMessage]) -> AIMessage:
    """Search two rounds, then report."""
    rounds = len(tool_results(messages))
    if rounds < 2:
        query = {"queries": [f"heat pumps round {rounds}"]}
        return AIMessage("", tool_calls=[call("web_search", query, f"s{rounds}")])
    return AIMessage("Findings.")


async def test_a_page_read_in_an_earlier_round_is_named_not_sent_again(
    use_script: Callable[..., ScriptedChatModel],
    pages: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = SamePages(f"http://{PAGES_HOST}:{pages.port}", "shared", titled_by_query=True)
    monkeypatch.setattr("deep_research.search.step.make_provider", lambda name: provider)
    model = use_script(script_for(orchestrator_fanning_out("heat pumps"), twice))
    await run({**NO_CLARIFY, "relevance_threshold": 0.0})
    researcher_calls = [messages for messages, tools in model.calls if "web_search" in tools]
    last = researcher_calls[-1]
    results = [str(m.content) for m in tool_results(last)]
    assert len(results) == 2
    page_text = "percent change in shared"
    assert results[0].count(page_text) > 0, "the first round gives the pages' text"
    assert page_text not in results[1], "the second round does not send it again"
    assert "2 more results, shown above" in results[1]
    assert "/article/shared-0" in results[0], "the link is in the history, to be cited"
    assert "searches left on this topic" in results[-1]


async def test_a_run_starts_loading_the_relevance_model_before_any_search(
    use_script: Callable[..., ScriptedChatModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    warmed: list[int] = []
    monkeypatch.setattr(embedding, "warm_up", lambda **_: warmed.append(1))
    use_script(script_for(lambda messages: AIMessage("# Report\n\nNo research needed.")))
    await run(NO_CLARIFY)
    assert warmed == [1]
    await run({**NO_CLARIFY, "max_searches_per_run": 0}, thread="no-searches")
    assert warmed == [1], "a run that may not search never loads the model"


def test_warm_up_loads_in_a_daemon_thread_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[str] = []
    gate = threading.Event()

    def slow_embedder(**_: object) -> Any:
        loads.append(threading.current_thread().name)
        gate.wait(10)
        return object()

    monkeypatch.setattr(loader, "embedder", slow_embedder)
    monkeypatch.setattr(loader, "_model", None)
    monkeypatch.setattr(loader, "_warming", None)
    loader.warm_up()
    loader.warm_up()  # already loading: no second thread
    thread = loader._warming
    assert thread is not None and thread.daemon, "never holds up the interpreter's exit"
    gate.set()
    thread.join(10)
    assert loads == ["relevance-warm-up"]


async def test_pages_are_extracted_on_threads_of_their_own(
    pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    names: list[str] = []
    real = extract.to_text

    def recording(*args: Any) -> str:
        names.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(extract, "to_text", recording)
    policy = ALLOW_PAGES
    async with PageFetcher(policy, timeout=5.0, max_chars=2_000) as fetcher:
        page = await fetcher.fetch(f"http://{PAGES_HOST}:{pages.port}/article/own-thread")
    assert page.text and names and names[0].startswith("extract")


def test_a_second_warm_up_returns_while_the_first_is_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = threading.Event()

    def loading_embedder(**_: object) -> Any:
        with loader._model_lock:  # as the real one: the lock is held for the whole load
            gate.wait(10)
        return object()

    monkeypatch.setattr(loader, "embedder", loading_embedder)
    monkeypatch.setattr(loader, "_model", None)
    monkeypatch.setattr(loader, "_warming", None)
    loader.warm_up()  # one run's first node
    again = threading.Thread(target=loader.warm_up)  # another run's, in the same process
    again.start()
    again.join(5)
    finished = not again.is_alive()
    gate.set()
    assert finished, "the run's warm-up waited for the model's load"
    thread = loader._warming
    assert thread is not None
    thread.join(10)


@pytest.mark.slow
async def test_an_empty_memory_is_opened_beside_the_first_model_call_not_before_it(
    use_script: Callable[..., ScriptedChatModel],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
) -> None:
    # An earlier test's memory threads, still at work, would open this test's store (they
    # read MEMORY_DIR when they open): they end first.
    for thread in threading.enumerate():
        if thread.name in ("memory-open", "memory-prepare"):
            thread.join(60)
    memory = tmp_path / "memory"
    monkeypatch.setenv("MEMORY_DIR", str(memory))
    monkeypatch.setattr(embedding, "warm_up", lambda **_: None)
    answered = threading.Event()
    # This run's, not one an earlier test's run set. The scripted model sends nothing over
    # HTTP, so its call beginning is what lets the open start, once `UNSEEN_SEND_WAIT` has
    # passed (at once here: the floor's research would come back within it, and its pages'
    # preparation open the store first).
    call_began = threading.Event()
    monkeypatch.setattr(process, "_model_call_began", call_began)
    monkeypatch.setattr(process, "_model_request_sent", threading.Event())
    monkeypatch.setattr(process, "_first_call_at", [0.0])
    monkeypatch.setattr(process, "UNSEEN_SEND_WAIT", 0.0)
    after_request: list[bool] = []
    began: list[str] = []  # the thread of each open, as it begins
    waited: list[bool] = []  # whether the first model call was answered when the open began
    seen: list[int] = []  # opens finished when each model call came

    def answer(messages: list[BaseMessage]) -> AIMessage:
        seen.append(len(opened))
        answered.set()
        return AIMessage("# Report\n\nNo research needed.")

    opened: list[str] = []  # the thread of each open of this test's store (later ones: cached)
    real_open = memory_open.open_store_blocking

    def held(*args: Any, **kwargs: Any) -> Any:
        began.append(threading.current_thread().name)
        # Begun only once the first model request was out (chromadb's import would take
        # the interpreter from the steps that build it)...
        after_request.append(call_began.is_set())
        # ... and held until the model has answered: were the open on the path, the run
        # would wait for it, and it for the run (the test's timeout).
        waited.append(answered.wait(30))
        store = real_open(*args, **kwargs)
        if store.location.path == memory:  # not a store another test's thread opens
            opened.append(threading.current_thread().name)
        return store

    monkeypatch.setattr(memory_open, "open_store_blocking", held)
    use_script(script_for(answer))
    values = await run({**NO_CLARIFY, "use_memory": True})
    # Nothing was remembered yet: no store (nor chromadb, nor the relevance model) stood
    # between the question and the first model call; the store was opened beside it, on a
    # thread of its own, for `remember`. This report cites nothing, so nothing is stored.
    assert seen[0] == 0 and waited[:1] == [True] and after_request[:1] == [True]
    assert values["status"] == "no_sources"
    for thread in threading.enumerate():
        if thread.name == "memory-open":
            thread.join(60)
    assert began[:1] == ["memory-open"] and "memory-open" in opened, "early, on its own thread"
