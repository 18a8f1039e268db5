"""Memory and the library on one Chroma server, shared by every instance: a report that a
run on one instance remembered is recalled by a run on another, and documents added once
are read by runs on both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.support.agent_cluster import Instance, agent_cluster, stop
from tests.support.brain import LINK, ResearchBrain
from tests.support.chroma_server import chroma_server
from tests.support.cli import library_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT
from tests.support.library_brain import FILE_LINK, LibraryBrain

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"
RUN_TIMEOUT = 300.0
NO_CLARIFY = {"allow_clarification": False, "fetch_top_n": 0}


async def research(instance: Instance, context: dict[str, Any]) -> dict[str, Any]:
    client = get_client(url=instance.url, api_key=None, timeout=RUN_TIMEOUT)
    thread_id = (await client.threads.create())["thread_id"]
    user = {"role": "user", "content": QUESTION}
    await client.runs.wait(
        thread_id, ASSISTANT, input={"messages": [user]}, context=context, raise_error=True
    )
    values: dict[str, Any] = (await client.threads.get_state(thread_id))["values"]
    return values


def memory_env(port: int) -> dict[str, str]:
    return {"USE_MEMORY": "true", "CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(port)}


async def test_a_report_remembered_on_one_instance_is_recalled_on_another(
    tmp_path: Path, postgres_dsn: str, redis_url: str
) -> None:
    with (
        chroma_server(tmp_path / "chroma", tmp_path / "chroma.log") as port,
        ScriptedOpenAIServer(ResearchBrain()) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(
            tmp_path, model, tavily, postgres_dsn, redis_url, count=1, extra_env=memory_env(port)
        ) as cluster,
    ):
        # Each run is the only instance's at its time, so "another" is certain.
        [first] = cluster.instances
        remembered = await research(first, NO_CLARIFY)
        searched = len(tavily.queries)
        stop(first.proc)
        second = cluster.start()
        recalled = await research(second, NO_CLARIFY)
        again = len(tavily.queries) - searched
    assert first.pid != second.pid
    assert searched >= 2 and again < searched, (searched, again)
    for values in (remembered, recalled):
        cited = set(LINK.findall(values["final_report"]))
        assert cited and cited <= tavily.returned_urls, values["final_report"]
    assert "retrieved" in recalled["final_report"]  # cited from memory, with its first date


async def test_the_library_added_once_is_read_by_runs_on_both_instances(
    tmp_path: Path, postgres_dsn: str, redis_url: str
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Heat pumps\n\nHeat pumps in cold weather keep heating at minus 20.\n")
    with chroma_server(tmp_path / "chroma", tmp_path / "chroma.log") as port:
        env = library_env(tmp_path) | {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(port)}
        added = run_cli(tmp_path, env, "library", "add", str(notes))
        assert added.returncode == 0 and "Done: 1 added" in added.stdout, added
        with (
            ScriptedOpenAIServer(LibraryBrain()) as model,
            FakeTavilyServer() as tavily,
            agent_cluster(
                tmp_path,
                model,
                tavily,
                postgres_dsn,
                redis_url,
                count=1,
                extra_env=memory_env(port),
            ) as cluster,
        ):
            context = NO_CLARIFY | {"search_provider": "library"}
            [first] = cluster.instances
            on_first = await research(first, context)
            stop(first.proc)
            on_second = await research(cluster.start(), context)
    assert tavily.queries == []  # the library only: nothing reached the web
    for values in (on_first, on_second):
        cited = set(FILE_LINK.findall(values["final_report"]))
        assert any(url.startswith(notes.resolve().as_uri()) for url in cited), values
