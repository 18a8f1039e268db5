"""What traces (LangSmith, the CLI's traffic log) call each run: names, tags and metadata.

Nodes are already named by what they do (`clarify`, `orchestrate`, `finalize`); this adds
`research: <topic>` for each researcher, `search: <query>` for each query, `role:` and
`model:` tags on model calls, and the search provider and caps as metadata. Only
`Context` values go in: endpoints and keys live in `Endpoints` and never reach a trace.
What a server wrote can still hold a key (an error text quoting it), so every trace goes
through a LangSmith client whose anonymizer is the shared redactor (`secrets.scrub`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import langsmith
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tracers.langchain import LangChainTracer
from langgraph.config import get_config
from langsmith import utils as langsmith_utils
from langsmith.run_helpers import get_current_run_tree

from deep_research.config.settings import Context
from deep_research.text import secrets
from deep_research.text.wording import one_line

T = TypeVar("T")

# Long topics and queries make trace lists unreadable; the full text is in the inputs.
NAME_CHARS = 80


def redact_traces() -> None:
    """When tracing is on, trace through a LangSmith client that scrubs every run it sends.

    The anonymizer sees inputs, outputs, metadata and error texts (with their tracebacks)
    before they leave the process. LangChain's tracer takes langsmith's cached client when
    a run starts, so this runs when the graph's modules are imported; a client is made only
    when tracing is enabled, since making one asks the LangSmith API for its settings.
    """
    if langsmith_utils.tracing_is_enabled():
        langsmith.configure(client=langsmith.Client(anonymizer=secrets.scrub))


redact_traces()


def run_metadata(context: Context) -> dict[str, Any]:
    """Search provider and caps of a run, for the top-level trace (LangGraph adds thread_id)."""
    return {
        "search_provider": context.search_provider,
        "max_searches_per_run": context.max_searches_per_run,
        "max_results_per_search": context.max_results_per_search,
        "max_researchers_per_turn": context.max_researchers_per_turn,
        "max_orchestrator_turns": context.max_orchestrator_turns,
        "max_researcher_turns": context.max_researcher_turns,
        "max_clarification_rounds": context.max_clarification_rounds,
    }


def note_on_root_run(metadata: dict[str, Any]) -> None:
    """Add `metadata` to the LangSmith trace's root run (the graph's), from inside a node.

    The root's metadata is sent when it starts, before a run's cost is known; its end sends
    the run's `extra` again, so what is added here (the usage, at `finalize`) arrives with
    it. A no-op when not tracing to LangSmith."""
    run = get_current_run_tree()  # set only when a LangChainTracer traces this run
    if run is None:
        return
    try:
        callbacks = get_config().get("callbacks")
    except RuntimeError:  # called outside a graph run
        return
    for handler in getattr(callbacks, "handlers", []):
        if isinstance(handler, LangChainTracer):
            root = handler.run_map.get(str(run.trace_id))
            if root is not None:  # a copy: the dict may be shared with other runs
                root.extra["metadata"] = {**root.extra.get("metadata", {}), **metadata}


def model_config(role: str, spec: str) -> RunnableConfig:
    """Tags and metadata for one model call: which role asked, which model answered."""
    return {"tags": [f"role:{role}", f"model:{spec}"], "metadata": {"role": role, "model": spec}}


def research_config(topic: str, context: Context) -> RunnableConfig:
    """The research subgraph's run: named by its topic, so a trace reads like the plan."""
    return {
        "run_name": f"research: {one_line(topic, NAME_CHARS)}",
        "tags": ["role:researcher", f"model:{context.researcher_model}"],
        "metadata": {"topic": topic, **run_metadata(context)},
    }


async def named_search(query: str, provider: str, run: Callable[[], Awaitable[T]]) -> T:
    """`run()` as a traced run named `search: <query>`, tagged with the provider asked first."""

    async def search(_: str) -> T:
        return await run()

    config: RunnableConfig = {
        "run_name": f"search: {one_line(query, NAME_CHARS)}",
        "tags": ["search", f"search_provider:{provider}"],
        "metadata": {"search_provider": provider},
    }
    result: T = await RunnableLambda(search).ainvoke(query, config)
    return result
