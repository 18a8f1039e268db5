"""Eight research threads at once on two Aegra instances over one Postgres and one Redis:
both instances run some (each takes four at most), every thread ends with its report."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph_sdk import get_client

from tests.support.agent_cluster import agent_cluster
from tests.support.brain import LINK
from tests.support.cluster_brain import ClusterBrain, question, searches_of
from tests.support.fakes.openai_server import InFlightBarrier, ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

THREADS = 8
CAP = 6
RUN_TIMEOUT = 300.0
CONTEXT = {"fetch_top_n": 0, "max_searches_per_run": CAP}


def running_claims(database_url: str) -> list[str]:
    """Which worker holds each running run's lease now (Aegra: `host-PID-worker-N`)."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT claimed_by FROM runs WHERE status = 'running'").fetchall()
    return [str(row[0]) for row in rows]


async def test_eight_threads_spread_over_two_instances_each_end_with_a_report(
    tmp_path: Path, postgres_dsn: str, redis_url: str
) -> None:
    barrier = InFlightBarrier(THREADS, timeout=120.0)
    brain = ClusterBrain(start_barrier=barrier)
    with (
        ScriptedOpenAIServer(brain) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(tmp_path, model, tavily, postgres_dsn, redis_url, jobs=4) as cluster,
    ):
        first, second = cluster.instances
        clients = [
            get_client(url=i.url, api_key=None, timeout=RUN_TIMEOUT) for i in cluster.instances
        ]
        claims: list[str] = []

        async def research(case: int) -> dict[str, Any]:
            client = clients[case % 2]  # half the threads created through each instance
            thread_id = (await client.threads.create())["thread_id"]
            user = {"role": "user", "content": question(case)}
            await client.runs.wait(
                thread_id, ASSISTANT, input={"messages": [user]}, context=CONTEXT, raise_error=True
            )
            other = clients[(case + 1) % 2]  # and read through the other
            values: dict[str, Any] = (await other.threads.get_state(thread_id))["values"]
            return values

        async def watch_claims() -> None:
            # The barrier opens only with all eight first orchestrator requests in flight at
            # once: with four runs per instance, each instance holds four leases then.
            while not barrier.released:
                await asyncio.sleep(0.2)
            claims.extend(await asyncio.to_thread(running_claims, postgres_dsn))

        watcher = asyncio.create_task(watch_claims())
        results = await asyncio.gather(*(research(case) for case in range(THREADS)))
        await watcher
    assert barrier.released and barrier.max_in_flight == THREADS
    owners = {claim.rsplit("-worker-", 1)[0].rsplit("-", 1)[1] for claim in claims}
    assert owners == {str(first.pid), str(second.pid)}, claims
    for case, values in enumerate(results):
        report = values["final_report"]
        cited = set(LINK.findall(report))
        assert cited and cited <= tavily.returned_urls, report
        assert all(f"case{case}" in url for url in cited), (case, cited)
        sent = searches_of(tavily.queries, case)
        assert 0 < sent <= CAP and values["searches_used"] == sent, (case, sent, values)
