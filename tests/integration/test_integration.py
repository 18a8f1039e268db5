"""Real ChatOpenAI and AsyncTavilyClient over 127.0.0.1, against scripted servers."""

from __future__ import annotations

import sys

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deep_research.config.settings import Context
from deep_research.graph import builder
from deep_research.llm.models import ModelEndpointError, role_model
from deep_research.search import providers
from tests.support.brain import FAIL_MARKER, ResearchBrain, role_of
from tests.support.fakes.http_server import closed_port
from tests.support.fakes.openai_server import InFlightBarrier
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import QUESTION, cited, research_run, serve


async def test_full_run_cites_only_urls_the_search_api_returned(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = ResearchBrain(barrier=InFlightBarrier(k=2, timeout=10))
    with serve(brain, monkeypatch) as llm:
        out = await research_run({"max_researchers_per_turn": 2})
    urls = cited(out["final_report"])
    assert urls and urls <= tavily.returned_urls
    assert any("efficiency" in u for u in urls) and any("costs" in u for u in urls)
    assert brain.barrier_misses == [], "both researchers were in flight at the same time"
    assert llm.max_in_flight >= 2
    bodies = llm.requests
    assert {role_of(b) for b in bodies} == {"orchestrator", "researcher"}
    local = [b for b in bodies if b["model"] == "test-model"]
    assert len(local) == len(bodies)
    assert all(b["temperature"] == 0.1 and b["max_completion_tokens"] >= 4096 for b in bodies)
    assert all(header == "Bearer not-needed" for header in llm.auth_headers)
    assert {r["query"] for r in tavily.requests} == {
        "heat pump efficiency in cold climates 0",
        "heat pump installation costs 0",
    }


async def test_streaming_run_reassembles_tool_calls(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "stream"}}
    with serve(ResearchBrain(), monkeypatch) as llm:
        tokens = []
        async for chunk, _meta in graph.astream(
            QUESTION, config, context={"allow_clarification": False}, stream_mode="messages"
        ):
            tokens.append(chunk)
        state = (await graph.aget_state(config)).values
    assert any(body.get("stream") for body in llm.requests)
    assert tokens, "tokens were streamed"
    assert cited(state["final_report"]) <= tavily.returned_urls
    assert len(state["sources"]) >= 2


async def test_failed_researcher_leaves_siblings_and_names_the_gap(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = ResearchBrain(topics=["heat pump efficiency data", f"{FAIL_MARKER} heat pump myths"])
    with serve(brain, monkeypatch):
        out = await research_run({})
    report = out["final_report"]
    assert any("efficiency" in u for u in cited(report)), "the sibling's findings survive"
    assert [f["topic"] for f in out["failures"]] == [f"{FAIL_MARKER} heat pump myths"]
    assert "HTTP 400: model refused topic" in out["failures"][0]["error"]
    assert "## Research gaps" in report and f"{FAIL_MARKER} heat pump myths" in report


async def test_search_provider_error_becomes_a_tool_message(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = ResearchBrain(topics=["FAIL_SEARCH heat pumps"])
    with serve(brain, monkeypatch) as llm:
        out = await research_run({})
    researcher_bodies = [b for b in llm.requests if role_of(b) == "researcher"]
    told = researcher_bodies[-1]["messages"][-1]["content"]
    assert "Search failed: tavily failed" in told
    assert out["failures"] == []


async def test_clarifier_json_in_prose_and_resume_without_repeating_the_call(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "clarify"}}
    context = {"max_clarification_rounds": 2}
    with serve(ResearchBrain(), monkeypatch) as llm:
        out = await graph.ainvoke(QUESTION, config, context=context)
        assert out["__interrupt__"][0].value["questions"] == [
            "Which climate zone?",
            "Home or commercial buildings?",
        ]
        out = await graph.ainvoke(Command(resume=["not", "a", "string"]), config, context=context)
        assert "error" in out["__interrupt__"][0].value
        out = await graph.ainvoke(Command(resume="Nordic homes"), config, context=context)
        bodies = llm.requests
    assert cited(out["final_report"]) <= tavily.returned_urls
    clarifier = [b for b in bodies if role_of(b) == "clarifier"]
    before_answer = [b for b in clarifier if "Nordic" not in str(b["messages"])]
    assert len(before_answer) == 1, "resuming never repeats the clarifier's first call"
    assert len(clarifier) == 2, "after the answer the model decides once more (round 2 allowed)"


async def test_dead_endpoint_gives_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv("LLM_BASE_URL", url)
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    model = role_model(Context(), "clarifier")
    with pytest.raises(ModelEndpointError) as error:
        await model.ask([HumanMessage("hi")])
    message = str(error.value)
    server = "mlx_lm.server" if sys.platform == "darwin" else "llama-server"
    assert url in message and server in message and "LLM_BASE_URL" in message
    assert error.value.__cause__ is None and error.value.__suppress_context__


async def test_ddgs_provider_at_the_library_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []

    def fake_text(self: object, query: str, max_results: int = 5) -> list[dict[str, str]]:
        calls.append((query, max_results))
        return [{"href": "https://example.org/a", "title": "A", "body": "text"}, {"title": "x"}]

    # ddgs exports a lazy proxy; patch the real class behind it.
    from ddgs.ddgs import DDGS

    monkeypatch.setattr(DDGS, "text", fake_text)
    provider = providers.make_provider("auto")  # no Tavily key: ddgs
    assert provider.name == "ddgs"
    results = await provider.search("heat pumps", 3)
    assert calls == [("heat pumps", 3)]
    assert results == [providers.SearchResult("https://example.org/a", "A", "text")]


async def test_auto_picks_tavily_only_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert providers.make_provider("auto").name == "ddgs"
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    assert providers.make_provider("auto").name == "tavily"
    assert providers.make_provider("ddgs").name == "ddgs"


async def test_roles_can_point_at_a_cloud_model_without_code_changes(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    with serve(ResearchBrain(), monkeypatch) as llm:
        # Stand-in for api.openai.com: the OpenAI client honours OPENAI_BASE_URL.
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cloud-test")
        out = await research_run({"orchestrator_model": "openai:gpt-4.1-mini"})
        bodies, headers = llm.requests, llm.auth_headers
    assert cited(out["final_report"]) <= tavily.returned_urls
    cloud = [(b, h) for b, h in zip(bodies, headers, strict=True) if b["model"] == "gpt-4.1-mini"]
    assert cloud and all(role_of(b) == "orchestrator" for b, _ in cloud)
    assert all("temperature" not in b and h == "Bearer sk-cloud-test" for b, h in cloud)
    local = [b for b in bodies if b["model"] == "test-model"]
    assert local and all(b["temperature"] == 0.1 for b in local)
