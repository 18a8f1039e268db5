"""A thread's clarifying questions, asked through one instance, answered through the other."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from tests.support.agent_cluster import agent_cluster
from tests.support.brain import LINK
from tests.support.cluster_brain import ClusterBrain, question
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.langgraph_dev import ASSISTANT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN_TIMEOUT = 300.0
CONTEXT = {"fetch_top_n": 0, "max_searches_per_run": 6}


async def test_a_clarifying_interrupt_is_answered_through_the_other_instance(
    tmp_path: Path, postgres_dsn: str, redis_url: str
) -> None:
    with (
        ScriptedOpenAIServer(ClusterBrain()) as model,
        FakeTavilyServer() as tavily,
        agent_cluster(tmp_path, model, tavily, postgres_dsn, redis_url) as cluster,
    ):
        asking, answering = (
            get_client(url=i.url, api_key=None, timeout=RUN_TIMEOUT) for i in cluster.instances
        )
        thread_id = (await asking.threads.create())["thread_id"]
        user = {"role": "user", "content": question(1, ask=True)}
        await asking.runs.wait(
            thread_id, ASSISTANT, input={"messages": [user]}, context=CONTEXT, raise_error=True
        )
        paused = await answering.threads.get_state(thread_id)
        [interrupt] = paused["interrupts"]
        assert interrupt["value"]["questions"] == [
            "Which climate zone?",
            "Home or commercial buildings?",
        ]
        assert tavily.queries == []  # nothing researched before the answer
        await answering.runs.wait(
            thread_id,
            ASSISTANT,
            command={"resume": "Oslo, detached houses"},
            context=CONTEXT,
            raise_error=True,
        )
        done = await asking.threads.get_state(thread_id)
        # Without a token: a page in this machine's browser, or a name rebound to 127.0.0.1,
        # reaches the port from loopback but is refused; Studio's origin is not.
        async with httpx.AsyncClient(base_url=cluster.instances[0].url, trust_env=False) as http:
            for foreign in ({"Origin": "https://evil.example"}, {"Host": "evil.example"}):
                refused = await http.post("/threads/search", json={}, headers=foreign)
                assert refused.status_code == 403, (foreign, refused.text)
            studio = {"Origin": "https://smith.langchain.com"}
            listed = await http.post("/threads/search", json={}, headers=studio)
            assert listed.status_code == 200, listed.text
            assert listed.headers["access-control-allow-origin"] == studio["Origin"]
            evil = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
            assert (
                "access-control-allow-origin"
                not in (await http.options("/threads/search", headers=evil)).headers
            )
    assert done["interrupts"] == [] and done["next"] == []
    report = done["values"]["final_report"]
    cited = set(LINK.findall(report))
    assert cited and cited <= tavily.returned_urls, report
    answers = [m["content"] for m in done["values"]["messages"] if m["type"] == "human"]
    assert "Oslo, detached houses" in " ".join(map(str, answers)), answers
