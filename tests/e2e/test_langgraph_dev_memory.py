"""Memory and the library under a real `langgraph dev`: its event-loop guard refuses any
blocking call (a file check, the working directory) on the loop, so this runs the memory's
whole path there: recall, stored passages answering searches, remember."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.support.brain import LINK, ResearchBrain
from tests.support.langgraph_dev import ASSISTANT, dev_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"
RUN_TIMEOUT = 180.0
NO_CLARIFY = {"allow_clarification": False, "fetch_top_n": 0}


async def test_a_second_thread_is_answered_from_memory_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    # MEMORY_DIR as a user leaves it (server_env sets none): the data directory under the
    # server's HOME, found without blocking the loop (a relative MEMORY_DIR, which asks for
    # the working directory, is one of unit/memory/test_store_chroma.py's blockbuster cases).
    with dev_server(tmp_path, ResearchBrain(), {"USE_MEMORY": "true"}) as server:
        client = get_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)

        async def research() -> dict[str, Any]:
            thread_id = (await client.threads.create())["thread_id"]
            user = {"role": "user", "content": QUESTION}
            await client.runs.wait(
                thread_id,
                ASSISTANT,
                input={"messages": [user]},
                context=NO_CLARIFY,
                raise_error=True,
            )
            values: dict[str, Any] = (await client.threads.get_state(thread_id))["values"]
            return values

        first = await research()
        searched = len(server.tavily.queries)
        second = await research()
        again = len(server.tavily.queries) - searched
    log = server.log.read_text()
    assert "BlockingError" not in log and "Blocking call" not in log
    assert searched >= 2 and again < searched, (searched, again)
    for values in (first, second):
        report = values["final_report"]
        assert LINK.findall(report) and set(LINK.findall(report)) <= server.tavily.returned_urls, (
            report
        )
        assert "Blocking call" not in report
    assert "retrieved" in second["final_report"]  # cited from memory, with its first date
