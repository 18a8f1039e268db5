"""End to end: research on a real `langgraph dev` with memory on, as it is by default.

The Agent Server raises `BlockingError` for a file-system call on its event loop; memory
and the library find their store on disk, so this run is where such a call shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.support.brain import ResearchBrain
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT, langgraph_dev, server_env

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 120.0


async def test_two_runs_with_memory_on_research_and_cite(tmp_path: Path) -> None:
    (home := tmp_path / "home").mkdir()
    with ScriptedOpenAIServer(ResearchBrain()) as model, FakeTavilyServer() as tavily:
        # MEMORY_DIR unset: the default, relative to the server's working directory
        # (tmp_path), so finding it reads that directory.
        env = server_env(home, model, tavily) | {"USE_MEMORY": "true"}
        with langgraph_dev(tmp_path, env) as url:
            client = get_client(url=url, api_key=None, timeout=RUN_TIMEOUT)
            question = {"messages": [{"role": "user", "content": "Heat pumps in the cold?"}]}
            # The second run recalls the first one's report from the store it wrote.
            for _ in range(2):
                thread_id = (await client.threads.create())["thread_id"]
                values = await client.runs.wait(
                    thread_id,
                    ASSISTANT,
                    input=question,
                    context={"allow_clarification": False},
                    raise_error=True,
                )
                assert isinstance(values, dict)
                assert "](https://" in values["final_report"], values["final_report"]
                assert not values.get("failures"), values.get("failures")
