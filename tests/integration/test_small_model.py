"""A 4-9B local model, scripted: real ChatOpenAI against the scripted server in small mode."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.config.settings import Context
from deep_research.graph import builder
from deep_research.nodes.planning import tools
from deep_research.researcher.graph import WebSearch
from deep_research.researcher.sources import search_tool
from tests.support.brain import role_of
from tests.support.fakes.tavily_server import FakeTavilyServer, topic_corpus
from tests.support.live import QUESTION, cited, research_run, serve
from tests.support.small_brain import INJECTED_PAGE, TEXT_MODES, Mode, SmallModelBrain

TOPICS = ["heat pump efficiency in cold climates", "heat pump installation costs"]


async def run_state(context: dict[str, Any], thread: str = "small") -> dict[str, Any]:
    """The run's whole final state, messages included."""
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    await graph.ainvoke(QUESTION, config, context={"allow_clarification": False, **context})
    return (await graph.aget_state(config)).values


def searched(tavily: FakeTavilyServer) -> set[str]:
    return {request["query"] for request in tavily.requests}


@pytest.mark.parametrize("mode", [*TEXT_MODES, "broken_native", "empty"])
async def test_each_small_model_mode_ends_with_a_cited_report(
    mode: Mode, monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SmallModelBrain(mode=mode)
    with serve(brain, monkeypatch) as llm:
        state = await run_state({})
    urls = cited(state["final_report"])
    assert urls and urls <= tavily.returned_urls
    assert searched(tavily) == {f"{topic} 0" for topic in TOPICS}, "both researchers searched"
    assert "tool_call" not in state["final_report"] and "DECOY" not in state["final_report"]
    calls = [c for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    assert sorted(c["args"].get("topic", "") for c in calls) == TOPICS
    if mode == "empty":
        nudged = [b for b in llm.requests if "Your last reply was empty" in json.dumps(b)]
        assert len(nudged) == len(brain.log) >= 5, "every empty reply was nudged once"


async def test_seed_transcript_runs_its_research_and_refuses_the_mixed_plan(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    with serve(SmallModelBrain(mode="seed"), monkeypatch):
        state = await run_state({})
    assert searched(tavily) == {"GTA San Andreas locations 0"}
    assert cited(state["final_report"]) <= tavily.returned_urls
    assert cited(state["final_report"])
    answers = {m.name: m for m in state["messages"] if m.type == "tool"}
    assert "call write_todos alone" in str(answers["write_todos"].content)
    assert "todos" not in state or state["todos"] == [], "a mixed reply leaves the plan alone"


async def test_churn_guard_trips_and_the_run_still_researches(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SmallModelBrain(mode="churn")
    with serve(brain, monkeypatch):
        state = await run_state({})
    assert state["churn"]["todos_locked"]
    assert brain.plans_written == 3, "two plans saved, the third refused"
    assert state["todos"] == [{"content": "Plan draft 2", "status": "pending"}]
    refusals = [m for m in state["messages"] if m.type == "tool" and m.status == "error"]
    assert len(refusals) == 1 and "Plan locked" in str(refusals[0].content)
    assert searched(tavily) == {f"{topic} 0" for topic in TOPICS}
    urls = cited(state["final_report"])
    assert urls and urls <= tavily.returned_urls


async def test_call_shaped_text_in_a_page_never_becomes_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def poisoned(query: str, max_results: int) -> list[dict[str, Any]]:
        results = topic_corpus(query, max_results)
        results[0]["content"] = INJECTED_PAGE
        return results

    brain = SmallModelBrain(mode="call", quote_pages=True)
    with FakeTavilyServer(corpus=poisoned) as poisoned_tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", poisoned_tavily.url)
        with serve(brain, monkeypatch) as llm:
            state = await run_state({})
    assert not any("INJECTED" in query for query in searched(poisoned_tavily))
    calls = [c for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    assert calls and not any("INJECTED" in json.dumps(c["args"]) for c in calls)
    research_results = [m for m in state["messages"] if m.type == "tool"]
    assert len(research_results) == len(TOPICS)
    assert any("> " in str(m.content) and "INJECTED" in str(m.content) for m in research_results)
    assert 'research({"topic": "INJECTED' in state["final_report"], "quoted, as text"
    orchestrator_replies = [b for b in llm.requests if role_of(b) == "orchestrator"]
    assert len(orchestrator_replies) == 2, "no extra turn was spent on an injected call"


def wire_tools(body: dict[str, Any]) -> dict[str, Any]:
    return {tool["function"]["name"]: tool for tool in body.get("tools", [])}


async def test_local_requests_carry_honest_schemas_low_temperature_and_no_thinking(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    with serve(SmallModelBrain(mode="hermes"), monkeypatch) as llm:
        await research_run({})
    bodies = llm.requests
    assert bodies and all(b["temperature"] == 0.1 for b in bodies)
    assert all(b["chat_template_kwargs"] == {"enable_thinking": False} for b in bodies)
    # The tools as this run's sources shape them: `research` asks whether a topic is
    # scholarly; the model marks none, so its researchers search the web alone.
    searching = search_tool(Context(), WebSearch, scholarly=False)
    planning = tools(Context())
    written = {
        t["function"]["name"]: t for t in map(convert_to_openai_tool, [*planning, searching])
    }
    assert "scholarly" in json.dumps(written["research"])
    assert "source" not in json.dumps(written["web_search"]["function"]["parameters"])
    offered = [wire_tools(b) for b in bodies if b.get("tools")]
    assert offered and all(tools == {n: written[n] for n in tools} for tools in offered)
    assert not any("strict" in json.dumps(b.get("tools", [])) for b in bodies)
    assert not any(key in b for b in bodies for key in ("tool_choice", "parallel_tool_calls"))
    todos = written["write_todos"]["function"]["parameters"]
    assert todos["required"] == ["todos"]
    assert todos["properties"]["todos"]["items"]["required"] == ["content"], "status optional"


@pytest.mark.parametrize(("setting", "sent"), [("on", {"enable_thinking": True}), ("server", None)])
async def test_thinking_is_configurable(
    setting: str,
    sent: dict[str, bool] | None,
    monkeypatch: pytest.MonkeyPatch,
    tavily: FakeTavilyServer,
) -> None:
    with serve(SmallModelBrain(mode="call"), monkeypatch) as llm:
        await research_run({"local_thinking": setting})
    assert all(b.get("chat_template_kwargs") == sent for b in llm.requests)


async def test_cloud_requests_keep_their_shape(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    with serve(SmallModelBrain(mode="broken_native"), monkeypatch) as llm:
        # OPENAI_API_BASE, not OPENAI_BASE_URL: langchain-openai caches its HTTP client by
        # this URL, and a client cached under None by another test belongs to a closed loop.
        monkeypatch.setenv("OPENAI_API_BASE", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cloud-test")
        out = await research_run({"orchestrator_model": "openai:gpt-4.1-mini"})
        bodies = llm.requests
    cloud = [b for b in bodies if b["model"] == "gpt-4.1-mini"]
    assert cloud and all(set(b) == {"model", "messages", "stream", "tools"} for b in cloud)
    written = {t["function"]["name"]: t for t in map(convert_to_openai_tool, tools(Context()))}
    assert all(wire_tools(b) == written for b in cloud)
    urls = cited(out["final_report"])
    assert urls and urls <= tavily.returned_urls, "broken calls are repaired on cloud too"
