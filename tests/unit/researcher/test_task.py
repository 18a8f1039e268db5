"""One `research` call as a task, called directly: its result, its contained failures."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from deep_research.config.settings import Context
from deep_research.llm.models import ModelEndpointError
from deep_research.researcher import task as research
from deep_research.state import Source
from deep_research.text import fences
from deep_research.text.limits import REPORT_CHARS

PAGE = "https://a.example/page"
SOURCES = [
    Source(url=PAGE, title="A", content="Heat pumps keep a COP of 2.", found_by="q"),
    Source(url="https://b.example/", title="B", content="Other.", found_by="q"),
]
TASK: Any = {
    "topic": "Heat pumps",
    "tool_call_id": "r1",
    "dispatch_id": "d1",
    "share": {"searches": 4},
}
RUNTIME = Runtime(context=Context())


class Subgraph:
    def __init__(self, outcome: dict[str, Any] | Exception) -> None:
        self.outcome = outcome

    async def ainvoke(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(research.progress, "emit", lambda event, **f: seen.append(event))
    monkeypatch.setattr(research, "get_config", lambda: {"configurable": {}})  # no checkpointer
    return seen


async def test_a_finished_topic_hands_back_its_checked_report_and_unused_searches(
    monkeypatch: pytest.MonkeyPatch, events: list[str]
) -> None:
    report = AIMessage(f"COP of 2 [cold]({PAGE}) and [made up](https://fake.example/).")
    done = {"messages": [report], "sources": SOURCES, "searches": 1}
    monkeypatch.setattr(research, "researcher_graph", Subgraph(done))
    update = await research.research_task(TASK, RUNTIME)
    [message] = update["messages"]
    assert message.name == "research" and message.tool_call_id == "r1"
    assert PAGE in message.content and "fake.example" not in message.content
    assert message.artifact["citation_check"]["fabricated_removed"] == 1
    assert update["sources"] == SOURCES and update["searches_used"] == 1 - 4
    assert events == ["research_started", "research_done"]


async def test_a_failure_stays_the_topics_own_redacted_and_fenced(
    monkeypatch: pytest.MonkeyPatch, events: list[str]
) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-secret-value-1234567890")
    failing = Subgraph(ValueError("bad key tvly-secret-value-1234567890"))
    monkeypatch.setattr(research, "researcher_graph", failing)
    update = await research.research_task(TASK, RUNTIME)
    [message] = update["messages"]
    [failure] = update["failures"]
    assert message.status == "error" and "<<<data " in message.content
    assert failure["topic"] == "Heat pumps" and failure["error"].startswith("ValueError: bad key")
    assert "secret-value" not in message.content + failure["error"]
    assert update["searches_used"] == 0  # no checkpointer: the whole share stays counted
    assert events == ["research_started", "research_failed"]


async def test_an_unreachable_model_stops_the_run(
    monkeypatch: pytest.MonkeyPatch, events: list[str]
) -> None:
    monkeypatch.setattr(research, "researcher_graph", Subgraph(ModelEndpointError("down")))
    with pytest.raises(ModelEndpointError):
        await research.research_task(TASK, RUNTIME)


def test_the_result_is_fenced_bounded_and_counts_pages_not_cited() -> None:
    text = research.result_text("r" * 3 * REPORT_CHARS, SOURCES, cited=1)
    assert text.startswith(research.RESULT_HEADER) and len(text) <= REPORT_CHARS
    assert "(1 more pages retrieved, not cited.)" in fences.unfence(text)
    assert "more pages" not in research.result_text("r", SOURCES, cited=2)


async def test_its_model_calls_lane_is_its_dispatch_s_call_not_the_bare_call_id(
    monkeypatch: pytest.MonkeyPatch, events: list[str]
) -> None:
    """A call id is unique within one reply only (a local server may number them), and the
    runs of one process share a one-slot server's turns: two runs' `call_0` are two lanes."""
    lanes: list[str] = []

    class Seen(Subgraph):
        async def ainvoke(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            lanes.append(research.slots.LANE.get())
            return await super().ainvoke(*args, **kwargs)

    done = {"messages": [AIMessage("Nothing found.")], "sources": [], "searches": 0}
    monkeypatch.setattr(research, "researcher_graph", Seen(done))
    for dispatch in ("run-a", "run-b"):
        await research.research_task(
            {**TASK, "tool_call_id": "call_0", "dispatch_id": dispatch}, RUNTIME
        )
    assert lanes == ["run-a:call_0", "run-b:call_0"]
