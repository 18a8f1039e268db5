"""An instance SIGKILLed mid-research: its runs' leases expire, the other instance's reaper
re-queues them, and they finish there from their checkpoints: each thread's searches at the
search API stay within its cap, and the state's count is what the API received."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph_sdk import get_client

from tests.support.agent_cluster import agent_cluster
from tests.support.brain import LINK
from tests.support.cluster_brain import ClusterBrain, question, searches_of
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

THREADS = 4  # two per instance (two jobs each): every instance holds two at the kill
CAP = 6
RUN_TIMEOUT = 300.0
HELD_DEADLINE = 120.0
CONTEXT = {"fetch_top_n": 0, "max_searches_per_run": CAP}


def claims(database_url: str) -> dict[str, str]:
    """Each running run's thread and the worker holding its lease."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT thread_id, claimed_by FROM runs WHERE status = 'running'"
        ).fetchall()
    return {str(thread): str(claim) for thread, claim in rows}


async def test_a_killed_instances_runs_finish_on_the_other_within_their_caps(
    tmp_path: Path, postgres_dsn: str, redis_url: str
) -> None:
    brain = ClusterBrain(hold_reports=True)
    with (
        ScriptedOpenAIServer(brain) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(tmp_path, model, tavily, postgres_dsn, redis_url, jobs=2) as cluster,
    ):
        doomed, survivor = cluster.instances
        client = get_client(url=survivor.url, api_key=None, timeout=RUN_TIMEOUT)
        threads = [(await client.threads.create())["thread_id"] for _ in range(THREADS)]
        for case, thread_id in enumerate(threads):
            user = {"role": "user", "content": question(case)}
            await client.runs.create(
                thread_id, ASSISTANT, input={"messages": [user]}, context=CONTEXT
            )
        # Every run's two researchers have searched and wait for their report requests.
        deadline = time.monotonic() + HELD_DEADLINE
        while brain.held < 2 * THREADS:
            assert time.monotonic() < deadline, f"only {brain.held} researchers reached"
            await asyncio.sleep(0.2)
        sent_before = {case: searches_of(tavily.queries, case) for case in range(THREADS)}
        held = await asyncio.to_thread(claims, postgres_dsn)
        on_doomed = {t for t, claim in held.items() if f"-{doomed.pid}-worker-" in claim}
        assert len(on_doomed) == 2 and len(held) == THREADS, held
        doomed.kill()
        brain.release(model)
        results: dict[str, dict[str, Any]] = {}
        for thread_id in threads:
            await client.runs.join(thread_id, await last_run(client, thread_id))
            results[thread_id] = (await client.threads.get_state(thread_id))["values"]
        log = survivor.log.read_text(errors="replace")
    assert "Reaping crashed worker runs" in log, log[-3000:]
    for case, thread_id in enumerate(threads):
        values = results[thread_id]
        report = values.get("final_report") or ""
        cited = set(LINK.findall(report))
        assert cited and cited <= tavily.returned_urls, (case, report)
        sent = searches_of(tavily.queries, case)
        assert sent_before[case] <= sent <= CAP, (case, sent_before, sent)
        assert values["searches_used"] == sent, (case, values["searches_used"], sent)
        # One question, asked once: the retried run went on from its checkpoint.
        asked = [m for m in values["messages"] if m["type"] == "human"]
        assert len(asked) == 1, (case, asked)


async def last_run(client: Any, thread_id: str) -> str:
    runs = await client.runs.list(thread_id)
    return str(runs[0]["run_id"])
