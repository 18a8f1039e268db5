"""The search cap, every scenario in one place: searches sent never exceed it, and the count in
state (and in the CLI summary) is the number sent, under any concurrency, crash and resume.

The in-process scenarios use the scripted chat model and the scripted search provider; the
CLI scenarios kill or interrupt a real `deep-research` process while the fake Tavily API
holds a search open, then resume it in a new process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.llm.models import ModelEndpointError
from deep_research.runtime import process
from deep_research.search import cache
from deep_research.search.budget import Grant, split
from deep_research.search.chain import SearchChain
from deep_research.search.fetch import PageFetcher
from deep_research.search.netguard import AddressPolicy
from deep_research.search.query import Searcher
from tests.support.brain import ResearchBrain
from tests.support.cli import CLI_TIMEOUT, QUESTION, cli_command, cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    researcher,
    script_for,
    tool_results,
)
from tests.support.live import QUESTION as RUN_INPUT
from tests.support.live import serve
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

Q = {"messages": [{"role": "user", "content": "q"}]}
THREE = ("alpha", "beta", "gamma")


class Crash(BaseException):
    """Stands in for the process dying mid-search: nothing in the graph catches it."""


async def run_three_researchers(
    use_script: Callable[..., ScriptedChatModel], cap: int, **config: Any
) -> dict[str, Any]:
    use_script(script_for(orchestrator_fanning_out(*THREE), lambda m: researcher(m, queries=2)))
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "cap"}, **config}
    context = {**NO_CLARIFY, "max_searches_per_run": cap, **config.pop("context", {})}
    await graph.ainvoke(Q, run_config, context=context)
    return (await graph.aget_state(run_config)).values


def test_quotas_split_what_is_left_and_never_add_up_to_more() -> None:
    assert split(4, 3) == [2, 1, 1]
    assert split(2, 3) == [1, 1, 0]
    assert split(0, 2) == [0, 0] and split(-3, 2) == [0, 0]
    assert all(sum(split(left, n)) == left for left in range(30) for n in range(1, 9))


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="parallel"),
        pytest.param({"max_concurrency": 1}, id="max_concurrency=1"),
        pytest.param({"max_concurrency": 2}, id="max_concurrency=2"),
        pytest.param({"context": {"max_researchers_per_turn": 1}}, id="one-researcher-at-a-time"),
    ],
)
async def test_three_researchers_never_send_more_than_the_cap(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    config: dict[str, Any],
) -> None:
    state = await run_three_researchers(use_script, cap=4, **config)
    assert len(scripted_search.queries) == 4
    assert state["searches_used"] == 4


async def test_refused_searches_are_told_to_the_researcher(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(orchestrator_fanning_out(*THREE), lambda m: researcher(m, 2)))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "told"}}
    await graph.ainvoke(Q, config, context={**NO_CLARIFY, "max_searches_per_run": 4})
    told = [str(m[-1].content) for m, tools in model.calls if "web_search" in tools]
    assert sum("Search cap reached" in text for text in told) == 2, "2 of 6 queries refused"


@pytest.mark.slow
async def test_quota_a_turn_leaves_unused_comes_back_on_the_next_turn(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        if turn == 0:  # two researchers, one query each, out of shares of 3
            calls = [call("research", {"topic": t}, f"r{t}") for t in ("one", "two")]
            return AIMessage("", tool_calls=calls)
        if turn == 1:  # one researcher wanting 4 queries: 6 - 2 = 4 are left for it
            return AIMessage("", tool_calls=[call("research", {"topic": "wide"}, "rwide")])
        return AIMessage("# Report")

    def research_step(messages: list[BaseMessage]) -> AIMessage:
        wide = "wide" in str(messages[1].content)
        return researcher(messages, queries=4 if wide else 1)

    use_script(script_for(orchestrator, research_step))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "turns"}}
    await graph.ainvoke(Q, config, context={**NO_CLARIFY, "max_searches_per_run": 6})
    state = (await graph.aget_state(config)).values
    assert len(scripted_search.queries) == 6 and state["searches_used"] == 6
    assert sum("wide" in q for q in scripted_search.queries) == 4


async def crash_mid_search_then_resume(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
    new_process: bool,
) -> tuple[dict[str, Any], list[str]]:
    """Two researchers of two queries each, cap 3; the first search of `alpha` dies."""
    use_script(script_for(orchestrator_fanning_out("alpha", "beta"), lambda m: researcher(m, 2)))
    real_search = scripted_search.search
    crashed: list[str] = []

    async def dying_search(query: str, max_results: int) -> Any:
        if query.startswith("alpha") and not crashed:
            crashed.append(query)
            scripted_search.queries.append(query)  # it reached the provider, then the crash
            raise Crash()
        return await real_search(query, max_results)

    monkeypatch.setattr(scripted_search, "search", dying_search)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "crash"}}
    context = {**NO_CLARIFY, "max_searches_per_run": 3}
    with pytest.raises(Crash):
        await graph.ainvoke(Q, config, context=context)
    sent_before = list(scripted_search.queries)
    if new_process:  # what another process resuming the thread would see
        monkeypatch.setattr(process, "_handed", type(process._handed)())
    await graph.ainvoke(None, config, context=context)
    return (await graph.aget_state(config)).values, sent_before


@pytest.mark.parametrize("new_process", [False, True], ids=["same-process", "new-process"])
async def test_a_search_step_that_died_is_never_sent_again_unreserved(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
    new_process: bool,
) -> None:
    state, sent_before = await crash_mid_search_then_resume(
        use_script, scripted_search, monkeypatch, new_process
    )
    sent = scripted_search.queries
    assert len(sent) <= 3, sent
    # Every search sent is counted; a search a stopped step may have sent (in another
    # process: unknown) is counted too, so the count can pass what was sent, never the cap.
    assert len(sent) <= state["searches_used"] <= 3, (sent, state["searches_used"])
    assert state["final_report"]
    assert len(sent) > len(sent_before) or len(sent_before) == 3


async def test_a_new_question_after_a_stopped_run_cannot_reuse_the_stopped_searches(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run stops mid-research (an outage after two searches) and the next input on the
    thread is a new question, not a resume: the dropped task's searches stay counted."""
    down = {"now": True}

    def research_step(messages: list[BaseMessage]) -> AIMessage:
        if tool_results(messages) and down["now"]:
            raise ModelEndpointError("Cannot reach the model server (scripted outage)")
        return researcher(messages, queries=2)

    use_script(script_for(orchestrator_fanning_out("alpha"), research_step))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "follow-up"}}
    context = {**NO_CLARIFY, "max_searches_per_run": 3}
    with pytest.raises(ModelEndpointError):
        await graph.ainvoke(Q, config, context=context)
    assert len(scripted_search.queries) == 2
    down["now"] = False
    monkeypatch.setattr(cache, "_runs", type(cache._runs)())  # a new process: no cache
    follow_up = {"messages": [{"role": "user", "content": "and another question"}]}
    await graph.ainvoke(follow_up, config, context=context)
    state = (await graph.aget_state(config)).values
    assert len(scripted_search.queries) <= 3, scripted_search.queries
    assert state["searches_used"] <= 3 and state["searches_used"] >= len(scripted_search.queries)


async def test_a_researcher_without_quota_never_refuses_a_sibling_asking_the_same_query(
    scripted_search: ScriptedSearch,
) -> None:
    shared = cache.RunCache(asyncio.get_running_loop())

    def lookup(owner: str, granted: int, fetcher: PageFetcher) -> Searcher:
        grant = Grant(granted, share=granted, counted_before=0, cap=1)
        chain = SearchChain([scripted_search])
        return Searcher(chain, shared, grant, owner, fetcher, 3, threshold=0.0, fetch_top_n=0)

    async with PageFetcher(AddressPolicy.from_env(), timeout=5, max_chars=1000) as fetcher:
        spent, fresh = lookup("spent", 0, fetcher), lookup("fresh", 1, fetcher)
        refused, answered = await asyncio.gather(spent.run("same query"), fresh.run("same query"))
    assert "Search cap reached" in refused.error
    assert answered.findings and not answered.error
    assert scripted_search.queries == ["same query"]


# --- The real ChatOpenAI and Tavily client against the scripted servers ----------------


@pytest.mark.slow
async def test_three_researchers_over_the_real_clients_never_send_more_than_the_cap(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = ResearchBrain(
        topics=["topic one about pumps", "topic two about pumps", "topic three about pumps"],
        queries_per_search=2,
    )
    with serve(brain, monkeypatch):
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "cap"}}
        await graph.ainvoke(
            RUN_INPUT, config, context={"allow_clarification": False, "max_searches_per_run": 3}
        )
        state = (await graph.aget_state(config)).values
    assert len(tavily.requests) == 3
    assert state["searches_used"] == 3


# --- The CLI: a real process killed or interrupted while a search is in flight -------------


def start_cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli_command(*args),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + CLI_TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def summary_number(stdout: str, label: str) -> int:
    line = next(line for line in stdout.splitlines() if line.startswith(label))
    return int(line.removeprefix(label).split()[0].rstrip(","))


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_a_cli_run_stopped_mid_search_and_resumed_keeps_the_cap_and_counts_every_search(
    tmp_path: Path, how: signal.Signals
) -> None:
    brain = ResearchBrain(topics=[f"{t} topic" for t in THREE], queries_per_search=2)
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        held = tavily.hold("alpha topic 1")
        proc = start_cli(tmp_path, env, "--max-searches", "4", QUESTION)
        try:
            assert held.wait(CLI_TIMEOUT), "the held search never arrived"
            # Stop once every search the shares allow has reached the API (one of alpha's is
            # held open), so the stop lands mid-search, after the reservations were saved.
            wait_for(lambda: len(tavily.queries) >= 4)
            os.killpg(proc.pid, how)
            _, stderr = proc.communicate(timeout=CLI_TIMEOUT)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        tavily.release()
        if how == signal.SIGINT:
            assert proc.returncode == 130, stderr
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        resumed = run_cli(tmp_path, env, "--resume", log.stem)
        sent = tavily.queries
    # The answers that were saved before the stop are reused (runtime/durable.py); a stop a
    # moment after the API answered may beat their writes, and then they count as sent and
    # the report may cite nothing (exit 3). Either way: never a search more than the cap.
    # (tests/e2e/test_cli_durable.py waits for the writes and checks the reuse itself.)
    assert resumed.returncode in (0, 3), resumed.stdout + resumed.stderr
    assert len(sent) == 4, "the held search was not sent again after the resume"
    # Every search reached the API before the stop: none is counted beyond those sent.
    assert f"searches      {len(sent)} of 4 sent" in resumed.stdout, resumed.stdout
    assert "more counted against the cap" not in resumed.stdout, resumed.stdout
    assert summary_number(resumed.stdout, "searches") == len(sent), resumed.stdout
