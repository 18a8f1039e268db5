"""The deep-research graph: clarify → orchestrate ⇄ (plan review | todos | research) → finalize.

Every model call and search inside a step is a durable call (runtime/durable.py), counted
against the search cap and the cost budget where it is made: nothing here counts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from deep_research.config.settings import Context, reject_unknown_settings
from deep_research.nodes.clarify import ask_user, clarify, route_clarify
from deep_research.nodes.finalize import finalize
from deep_research.nodes.orchestrator import orchestrate, route_orchestrate
from deep_research.nodes.plan_review import review_plan, route_review
from deep_research.nodes.question import new_question
from deep_research.nodes.recall import recall
from deep_research.nodes.remember import remember
from deep_research.nodes.tool_answers import answer_tools
from deep_research.researcher.task import research_task
from deep_research.runtime import process
from deep_research.state import InputState, OutputState, ResearchState

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime

builder = StateGraph(
    ResearchState, context_schema=Context, input_schema=InputState, output_schema=OutputState
)
builder.add_node(new_question)
builder.add_node(recall)
builder.add_node(clarify)
builder.add_node(ask_user)
builder.add_node(orchestrate)
builder.add_node(review_plan)
builder.add_node(answer_tools)
builder.add_node("research", research_task)  # type: ignore[arg-type]  # input: a Send payload
builder.add_node(finalize)
builder.add_node(remember)
builder.add_edge(START, "new_question")
builder.add_edge("new_question", "recall")
builder.add_edge("recall", "clarify")
builder.add_conditional_edges("clarify", route_clarify)
builder.add_edge("ask_user", "clarify")
builder.add_conditional_edges(
    "orchestrate",
    route_orchestrate,
    ["research", "answer_tools", "finalize", "review_plan", "orchestrate"],
)
builder.add_conditional_edges(
    "review_plan", route_review, ["research", "answer_tools", "finalize", "orchestrate"]
)
builder.add_edge("research", "orchestrate")
builder.add_edge("answer_tools", "orchestrate")
builder.add_edge("finalize", "remember")
builder.add_edge("remember", END)
graph = builder.compile(name="deep_research")
# The collector's first full pass after these imports (0.12 s, a million objects) waits for
# the first run's first model request, on a thread (runtime/process.py): from here, as the
# graph is ready, since the imports can bring it so close that the run's first allocations
# set it off before its first step could pause it.
process.settle_heap()


def make_graph(runtime: ServerRuntime) -> CompiledStateGraph[Any, Any, Any, Any]:
    """`graph`, for `langgraph.json`: the Agent Server calls this factory before each run.

    langgraph-api drops context keys that are not in the schema before the graph sees
    them, so a typo (`max_search_per_run`) would run with the default unnoticed. The
    factory still gets the context as the caller sent it, and rejects unknown keys with
    the same error `Context` gives everywhere else. (The annotation tells langgraph-api to
    pass the runtime; reads of state and schemas get one without a context.)
    """
    execution = runtime.execution_runtime
    if execution is not None and isinstance(execution.context, Mapping):
        reject_unknown_settings(execution.context)
    return graph
