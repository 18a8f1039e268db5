"""What Studio and SDK users see: a described, bounded settings form and progress events."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from deep_research.config.settings import Context
from deep_research.graph import builder
from deep_research.runtime import progress
from tests.support.graph_scripts import orchestrator_fanning_out, script_for
from tests.support.search import ScriptedSearch


def test_every_setting_is_described_and_every_number_bounded() -> None:
    for name, prop in Context.model_json_schema()["properties"].items():
        assert prop.get("description"), f"{name} has no description for Studio's form"
        variants = [prop, *prop.get("anyOf", [])]
        numeric = [v for v in variants if v.get("type") in ("integer", "number")]
        assert all("minimum" in v and "maximum" in v for v in numeric), f"{name} is unbounded"


def test_emit_outside_a_run_is_a_no_op() -> None:
    progress.emit("search", query="q")  # plain calls (unit tests, scripts) must not fail


async def test_sdk_style_stream_carries_progress_from_nodes_and_subgraphs(
    use_script: Any, scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(orchestrator_fanning_out("pump efficiency", "pump costs")))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "events"}}
    question = {"messages": [{"role": "user", "content": "heat pumps?"}]}
    events = [
        event
        async for _ns, event in graph.astream(
            question,
            config,
            context={"allow_clarification": False},
            stream_mode="custom",
            subgraphs=True,
        )
    ]
    names = [e["event"] for e in events]
    assert names[0] == "orchestrator_turn" and names[-1] == "report_written"
    started = {e["topic"] for e in events if e["event"] == "research_started"}
    assert started == {"pump efficiency", "pump costs"}
    searches = [e for e in events if e["event"] == "search"]
    # Two researchers, one search each, from shares of 13 and 12 of the cap of 25.
    assert sorted((e["sent"], e["share"]) for e in searches) == [(1, 12), (1, 13)]
    assert {e["cap"] for e in searches} == {25}
    done = [e for e in events if e["event"] == "research_done"]
    assert sorted(e["searches"] for e in done) == [1, 1] and all(e["sources"] for e in done)
