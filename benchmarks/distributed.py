"""The distributed Agent Server, measured: `python -m benchmarks.distributed [--json]`.

Real PostgreSQL and Redis (tests/support/services/), Aegra instances started as
tests/e2e/distributed/ start them (`tests/support/agent_cluster.py`), and the benchmarks'
scripted world with the cloud profile (0.5 s to the first token, 30 tokens/s, requests in
parallel; `world.BenchBrain`, K=3 researchers). It prints:

- 16 threads submitted at once to one instance (16 runs at a time), then to two (8 each):
  the wall time until every thread has its report, and threads per minute;
- the time from SIGKILL of the instance running a thread to that thread's next model
  request from the other instance, with Aegra's default lease (30 s, reaper every 15 s)
  and with the tests' short one (5 s, every 1 s);
- PostgreSQL's size per finished thread (the database after the runs, less the migrated
  empty one, over the threads).

A benchmark, not a test: nothing is asserted. Needs `.venv-server` (docs/distributed.md).
`--quick` (4 threads, the short lease only) is what tests/e2e/distributed/ runs of it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from langgraph_sdk import get_client

from benchmarks.world import PROFILES, BenchBrain
from tests.support.agent_cluster import LEASES, agent_cluster
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT
from tests.support.services import PostgresCluster, postgres_cluster, redis_server

THREADS = 16
TOPICS = ["heat pump efficiency", "installation costs", "grid effects"]
CONTEXT = {"allow_clarification": False, "fetch_top_n": 0}
RUN_TIMEOUT = 900.0
DEFAULT_LEASES = {  # Aegra's own defaults (aegra_api.settings.WorkerSettings)
    "LEASE_DURATION_SECONDS": "30",
    "HEARTBEAT_INTERVAL_SECONDS": "10",
    "REAPER_INTERVAL_SECONDS": "15",
    "BLPOP_TIMEOUT_SECONDS": "5",
}


class TimedBrain(BenchBrain):
    """BenchBrain that also notes when each request arrived (monotonic clock)."""

    arrivals: list[float]

    async def __call__(self, body: dict[str, Any]) -> Reply:
        self.arrivals.append(time.monotonic())
        return await super().__call__(body)


def brain() -> TimedBrain:
    made = TimedBrain(topics=TOPICS, profile=PROFILES["cloud"])
    made.arrivals = []
    return made


def database_bytes(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(row[0])


async def research_all(urls: list[str], threads: int) -> float:
    """Submit `threads` runs round-robin over `urls`; seconds until all have reports."""
    clients = [get_client(url=url, api_key=None, timeout=RUN_TIMEOUT) for url in urls]
    started = time.monotonic()
    made: list[tuple[Any, str, str]] = []
    for i in range(threads):
        client = clients[i % len(clients)]
        thread_id = (await client.threads.create())["thread_id"]
        user = {"role": "user", "content": f"Question {i}: are heat pumps worth it in Norway?"}
        run = await client.runs.create(
            thread_id, ASSISTANT, input={"messages": [user]}, context=CONTEXT
        )
        made.append((client, thread_id, run["run_id"]))
    for client, thread_id, run_id in made:
        await client.runs.join(thread_id, run_id)
        values = (await client.threads.get_state(thread_id))["values"]
        if not values.get("final_report"):
            raise RuntimeError(f"thread {thread_id} ended without a report")
    return time.monotonic() - started


def throughput(
    pg: PostgresCluster, root: Path, instances: int, threads: int = THREADS
) -> dict[str, Any]:
    dsn = pg.create_database()
    with (
        redis_server() as redis,
        ScriptedOpenAIServer(brain()) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(
            root,
            model,
            tavily,
            dsn,
            redis.url,
            count=instances,
            jobs=THREADS // instances,
            show_logs=False,
        ) as cluster,
    ):
        empty = database_bytes(dsn)
        seconds = asyncio.run(research_all([i.url for i in cluster.instances], threads))
        full = database_bytes(dsn)
    pg.drop_database(dsn.rsplit("/", 1)[1])
    return {
        "instances": instances,
        "threads": threads,
        "seconds": round(seconds, 1),
        "threads_per_minute": round(threads / seconds * 60, 1),
        "postgres_bytes_per_thread": (full - empty) // threads,
        "searches": len(tavily.queries),
    }


async def start_one_run(url: str, model: TimedBrain) -> None:
    client = get_client(url=url, api_key=None, timeout=RUN_TIMEOUT)
    thread_id = (await client.threads.create())["thread_id"]
    user = {"role": "user", "content": "Are heat pumps worth it in Norway?"}
    await client.runs.create(thread_id, ASSISTANT, input={"messages": [user]}, context=CONTEXT)
    while len(model.arrivals) < 4:  # planned, and researchers at work
        await asyncio.sleep(0.05)


def claimant(dsn: str) -> str:
    """The worker holding the one running run's lease (`host-PID-worker-N`)."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT claimed_by FROM runs WHERE status = 'running'").fetchone()
    assert row is not None, "no running run"
    return str(row[0])


async def finish(url: str) -> bool:
    client = get_client(url=url, api_key=None, timeout=RUN_TIMEOUT)
    [thread] = await client.threads.search()
    [run] = await client.runs.list(thread["thread_id"])
    await client.runs.join(thread["thread_id"], run["run_id"])
    state = await client.threads.get_state(thread["thread_id"])
    return bool(state["values"].get("final_report"))


def takeover(pg: PostgresCluster, root: Path, leases: dict[str, str]) -> dict[str, Any]:
    dsn = pg.create_database()
    timed = brain()
    with (
        redis_server() as redis,
        ScriptedOpenAIServer(timed) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(
            root, model, tavily, dsn, redis.url, extra_env=leases, show_logs=False
        ) as cluster,
    ):
        asyncio.run(start_one_run(cluster.instances[0].url, timed))
        claim = claimant(dsn)
        [doomed] = [i for i in cluster.instances if f"-{i.pid}-worker-" in claim]
        [survivor] = [i for i in cluster.instances if i is not doomed]
        before = len(timed.arrivals)
        doomed.kill()
        killed_at = time.monotonic()
        deadline = killed_at + 300
        while len(timed.arrivals) == before and time.monotonic() < deadline:
            time.sleep(0.05)  # waiting for the survivor's first request, not pacing a test
        resumed = timed.arrivals[before] - killed_at if len(timed.arrivals) > before else None
        finished = asyncio.run(finish(survivor.url))
        del model, tavily
    pg.drop_database(dsn.rsplit("/", 1)[1])
    return {
        "lease_seconds": int(leases["LEASE_DURATION_SECONDS"]),
        "reaper_seconds": int(leases["REAPER_INTERVAL_SECONDS"]),
        "kill_to_resume_seconds": None if resumed is None else round(resumed, 1),
        "finished": finished,
    }


def measure(quick: bool = False) -> dict[str, Any]:
    threads = 4 if quick else THREADS
    with postgres_cluster() as pg:
        root = Path(tempfile.mkdtemp(prefix="dr-bench-distributed-"))
        runs = []
        for number, instances in enumerate((1, 2)):
            (case := root / f"throughput-{number}").mkdir()
            runs.append(throughput(pg, case, instances, threads))
        kills = []
        for number, leases in enumerate([LEASES] if quick else [DEFAULT_LEASES, LEASES]):
            (case := root / f"takeover-{number}").mkdir()
            kills.append(takeover(pg, case, leases))
    return {"profile": "cloud", "topics": len(TOPICS), "throughput": runs, "takeover": kills}


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| instances | threads | seconds | threads/min | Postgres per thread |",
        "|---|---|---|---|---|",
    ]
    for r in results["throughput"]:
        lines.append(
            f"| {r['instances']} | {r['threads']} | {r['seconds']} | {r['threads_per_minute']} "
            f"| {r['postgres_bytes_per_thread'] / 1024:.0f} KiB |"
        )
    lines += ["", "| lease | reaper every | SIGKILL → resumed elsewhere | finished |"]
    lines.append("|---|---|---|---|")
    for k in results["takeover"]:
        lines.append(
            f"| {k['lease_seconds']} s | {k['reaper_seconds']} s "
            f"| {k['kill_to_resume_seconds']} s | {k['finished']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.distributed")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--quick", action="store_true", help="4 threads, the short lease only")
    args = parser.parse_args()
    os.environ["DEEP_RESEARCH_DOTENV"] = "0"
    results = measure(args.quick)
    print(json.dumps(results, indent=2) if args.json else markdown(results))


if __name__ == "__main__":
    main()
