"""Citations checked end to end: real ChatOpenAI and Tavily client over 127.0.0.1."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.brain import LINK, role_of
from tests.support.citing_brain import QUOTE, CitingBrain
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

QUESTION = {"messages": [{"role": "user", "content": "How well do heat pumps work in the cold?"}]}


async def test_fabricated_link_and_missing_passage_never_reach_the_user(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = CitingBrain()
    with ScriptedOpenAIServer(brain) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("LLM_MODEL", "test-model")
        graph = builder.compile(checkpointer=InMemorySaver())
        out = await graph.ainvoke(
            QUESTION,
            {"configurable": {"thread_id": "cite"}},
            context={"allow_clarification": False},
        )
        bodies = llm.requests

    report, check = out["final_report"], out["citation_check"]
    assert brain.fabricated_url not in report
    assert quote(brain.missing_passage) not in report and "per this page" in report
    assert check["fabricated_removed"] == 1 and check["removed_urls"] == [brain.fabricated_url]
    assert check["fragments_dropped"] == 1

    # Every remaining citation is a page the search API returned ...
    cited = [url.split("#")[0] for url in LINK.findall(report)]
    assert cited and set(cited) <= tavily.returned_urls
    # ... and the quotes researchers gave were turned into fragments by code, which the
    # orchestrator copied and finalize verified again.
    fragment = f"#:~:text={quote(QUOTE)}"
    orchestrator_saw = [b for b in bodies if role_of(b) == "orchestrator"][-1]
    assert fragment in str(orchestrator_saw["messages"])
    assert check["fragments_kept"] >= 2 and fragment in report
    assert report.count("## Sources") == 1
