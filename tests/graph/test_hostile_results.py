"""A topic whose search returns malformed results keeps its good ones and tells the model."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.messages import ToolMessage

from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.graph_scripts import NO_CLARIFY, orchestrator_fanning_out, run, script_for
from tests.support.hostile import MALFORMED, mixed_results
from tests.support.scripted_model import ScriptedChatModel


async def test_a_topic_with_malformed_results_keeps_its_good_ones_and_says_so(
    monkeypatch: pytest.MonkeyPatch, use_script: Callable[..., ScriptedChatModel]
) -> None:
    model = use_script(script_for(orchestrator_fanning_out("heat pump topic")))
    with FakeTavilyServer(corpus=mixed_results) as tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        context = {"fetch_top_n": 0, "relevance_threshold": 0, "max_results_per_search": 10}
        out = await run({**NO_CLARIFY, **context})
    assert out["failures"] == [], "the topic is not a research gap"
    assert {s["url"] for s in out["sources"]} == {
        "https://good.example/a",
        "https://good.example/b",
    }
    views = [
        m
        for messages, tools in model.calls
        if "web_search" in tools
        for m in messages
        if isinstance(m, ToolMessage)
    ]
    note = f"tavily: {len(MALFORMED)} malformed results skipped."
    assert views and note in str(views[0].content) and views[0].artifact["notes"] == [note]
