"""Real ChatOpenAI, real Tavily client, real fetch: a run whose sources hold the pages read."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.brain import LINK, ResearchBrain, role_of
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.page_server import PageServer
from tests.support.fakes.tavily_server import FakeTavilyServer, slugify
from tests.support.search import PAGES_HOST


async def test_run_reads_pages_and_sources_carry_their_text(
    monkeypatch: pytest.MonkeyPatch, pages: PageServer
) -> None:
    def corpus(query: str, max_results: int) -> list[dict[str, Any]]:
        base = f"http://{PAGES_HOST}:{pages.port}"
        return [
            {
                "url": f"{base}/article/{slugify(query)}-{i}",
                "title": f"{query} - source {i}",
                "content": f"Source {i} on {query}.",
                "score": 0.9,
            }
            for i in range(2)
        ] + [{"url": f"{base}/file.bin", "title": f"{query} data file", "content": query}]

    with FakeTavilyServer(corpus) as tavily, ScriptedOpenAIServer(ResearchBrain()) as llm:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        graph = builder.compile(checkpointer=InMemorySaver())
        question = {"messages": [{"role": "user", "content": "Heat pumps in the cold?"}]}
        context = {"allow_clarification": False, "max_results_per_search": 3, "fetch_top_n": 3}
        out = await graph.ainvoke(question, {"configurable": {"thread_id": "p"}}, context=context)
        bodies = llm.requests
    fetched = [path for path in pages.requests if path.startswith("/article/")]
    assert len(fetched) == 4, "two researchers, two pages each"
    read = [s for s in out["sources"] if "/article/" in s["url"]]
    assert read and all("percent change in heat pump" in s["content"] for s in read)
    assert set(LINK.findall(out["final_report"])) <= tavily.returned_urls
    seen = "\n".join(
        str(m.get("content")) for b in bodies if role_of(b) == "researcher" for m in b["messages"]
    )
    assert "page not read (content type 'application/octet-stream' is not read)" in seen
