"""Sizes over the real ChatOpenAI: a huge message never makes a thread unusable, and a
request a server refuses as too long for its context is sent again shorter, never the same."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deep_research.graph import builder
from deep_research.llm.errors import ContextTooLongError
from deep_research.text.limits import SHORTEN_ROUNDS, USER_TEXT_CHARS
from tests.support.brain import ResearchBrain, role_of
from tests.support.context_brain import ContextWindowBrain, Shape, request_chars
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import cited, research_run, serve

TEN_MB = 10 * 1024 * 1024
CUT_NOTE = "more characters]"


def orchestrator_sizes(server: ScriptedOpenAIServer) -> list[int]:
    return [request_chars(b) for b in server.requests if role_of(b) == "orchestrator"]


def body_bytes(body: dict[str, Any]) -> int:
    return len(json.dumps(body).encode())


@pytest.mark.parametrize("shape", ["openai", "llama.cpp", "vllm", "413"])
async def test_a_request_too_long_for_the_context_is_retried_shorter_and_the_run_reports(
    shape: Shape, monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = ContextWindowBrain(shape=shape, max_chars=10_000, report_padding=9_000)
    with serve(brain, monkeypatch) as llm:  # type: ignore[arg-type]
        out = await research_run({})
    assert cited(out["final_report"]) and cited(out["final_report"]) <= tavily.returned_urls
    sizes = orchestrator_sizes(llm)
    # First turn fits; the second (two padded reports) is refused, then shortened until it fits.
    assert sizes[0] <= 10_000 < sizes[1] and brain.refused[0] == sizes[1]
    retries = sizes[1 : 1 + len(brain.refused) + 1]
    assert all(a > b for a, b in zip(retries, retries[1:], strict=False)), retries
    assert retries[-1] <= 10_000 and len(retries) <= SHORTEN_ROUNDS + 1
    accepted = [b for b in llm.requests if role_of(b) == "orchestrator"][len(retries)]
    assert CUT_NOTE in json.dumps(accepted), "the model is told where text was cut"
    bodies = [json.dumps(b, sort_keys=True) for b in llm.requests]
    assert len(set(bodies)) == len(bodies), "no prompt is ever sent twice"


async def test_a_context_too_small_even_after_shortening_stops_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    # A window the orchestrator's request cannot fit however far it is shortened.
    brain = ContextWindowBrain(shape="llama.cpp", max_chars=3_000, report_padding=9_000)
    with serve(brain, monkeypatch) as llm:  # type: ignore[arg-type]
        endpoint = llm.base_url
        with pytest.raises(ContextTooLongError) as error:
            await research_run({})
    message = str(error.value)
    assert endpoint in message and "-c 32768" in message
    assert "OLLAMA_CONTEXT_LENGTH" in message and "exceeds the available context size" in message
    refused = orchestrator_sizes(llm)[1:]
    assert len(refused) == SHORTEN_ROUNDS + 1, "shortened a bounded number of times"
    assert all(a > b for a, b in zip(refused, refused[1:], strict=False)), refused
    assert refused == brain.refused[-len(refused) :]


async def test_a_ten_megabyte_resume_answer_still_ends_in_a_report_and_the_thread_goes_on(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "huge-answer"}}
    question = {"messages": [{"role": "user", "content": "Are heat pumps worth it?"}]}
    with serve(ResearchBrain(), monkeypatch) as llm:
        out = await graph.ainvoke(question, config)
        assert out["__interrupt__"][0].value["questions"]
        out = await graph.ainvoke(Command(resume="Nordic winters. " * (TEN_MB // 16)), config)
        assert cited(out["final_report"])
        follow_up = {"messages": [{"role": "user", "content": "And in Canada?"}]}
        again = await graph.ainvoke(follow_up, config)
    assert cited(again["final_report"]), "the thread stays usable"
    assert llm.oversized == [], "no request was refused as too large"
    sizes = [body_bytes(b) for b in llm.requests]
    assert max(sizes) < 64 * 1024, "bounded far below the server's 1 MiB"
    answers = [
        m["content"]
        for b in llm.requests
        if role_of(b) == "orchestrator"
        for m in b["messages"]
        if m["role"] == "user" and m["content"].startswith("Nordic")
    ]
    assert answers and all(len(a) <= USER_TEXT_CHARS and CUT_NOTE in a for a in answers)


async def test_a_ten_megabyte_question_is_cut_and_researched(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "huge-question"}}
    question = {"messages": [{"role": "user", "content": "heat pumps " * (TEN_MB // 11)}]}
    with serve(ResearchBrain(), monkeypatch) as llm:
        out = await graph.ainvoke(question, config, context={"allow_clarification": False})
    assert cited(out["final_report"])
    assert llm.oversized == [] and max(body_bytes(b) for b in llm.requests) < 64 * 1024
    stored = (await graph.aget_state(config)).values["messages"][0].content
    assert len(stored) <= USER_TEXT_CHARS and stored.endswith(CUT_NOTE)
