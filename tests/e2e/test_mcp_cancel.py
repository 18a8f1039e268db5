"""End to end: an MCP tool call the client cancels stops its run on the Agent Server."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from mcp import Client

from tests.support.brain import ResearchBrain, role_of
from tests.support.fakes.openai_server import Reply
from tests.support.langgraph_dev import dev_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WAIT = 60.0  # seconds: generous bounds on a busy machine, never reached when it works


@dataclass
class StallingBrain(ResearchBrain):
    """The orchestrator's first request never gets a reply (keep-alives until it leaves)."""

    asked: threading.Event = field(default_factory=threading.Event)

    async def __call__(self, body: dict[str, Any]) -> Reply:
        if role_of(body) == "orchestrator":
            self.asked.set()
            return Reply(keepalive=0.2)
        return await super().__call__(body)


async def test_a_cancelled_call_stops_its_run(tmp_path: Path) -> None:
    brain = StallingBrain()
    with dev_server(tmp_path, brain) as server:
        url = server.url

        async def call() -> None:
            async with Client(f"{url}/mcp") as client:
                await client.call_tool("deep_research", {"question": "Heat pumps in Oslo?"})

        task = asyncio.create_task(call())
        assert await asyncio.to_thread(brain.asked.wait, WAIT), "the run never planned"
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        sdk = get_client(url=url, api_key=None)
        [thread] = await sdk.threads.search(metadata={"source": "mcp"})
        [run] = await sdk.runs.list(thread["thread_id"])
        # A run left going would wait on the stalled model for ever.
        async with asyncio.timeout(WAIT):
            await sdk.runs.join(thread["thread_id"], run["run_id"])
        run = await sdk.runs.get(thread["thread_id"], run["run_id"])
        assert run["status"] not in ("pending", "running", "success"), run["status"]
