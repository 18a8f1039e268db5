"""The search cap across a crash, a stop and a resume: every search sent counted, none twice."""

from __future__ import annotations

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
from tests.support.brain import ResearchBrain
from tests.support.cli import CLI_TIMEOUT, QUESTION, cli_command, cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.graph_scripts import (
    NO_CLARIFY,
    orchestrator_fanning_out,
    researcher,
    script_for,
    tool_results,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch
from tests.support.search_cap import THREE, Q


class Crash(BaseException):
    """Stands in for the process dying mid-search: nothing in the graph catches it."""


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
