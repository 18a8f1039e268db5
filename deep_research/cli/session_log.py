"""A session's traffic log: opened with what was asked, handed to the graph's callbacks,
and read back for how the session before it ended."""

from __future__ import annotations

import socket
from typing import Any

from langchain_core.runnables import RunnableConfig

from deep_research.cli.runs import Home, RunSource
from deep_research.cli.traffic import TrafficHandler, TrafficLog
from deep_research.config.settings import Context
from deep_research.llm.spending import BudgetExceeded
from deep_research.runtime import tracing


def open_log(
    home: Home,
    runs: RunSource,
    thread_id: str,
    question: str,
    settings: dict[str, Any],
    *,
    action: str,
    wanted: dict[str, str],
) -> TrafficLog:
    """This session's traffic log, opened with its first `run` record: what was asked."""
    shared = (runs.shared, thread_id) if runs.shared is not None else None
    log = TrafficLog(home.log_path(thread_id), shared=shared)
    # Where this session's traffic log is: with a shared run list, another directory's
    # `--resume` tells the user where earlier sessions' logs stayed.
    here = {"log": str(log.path.absolute()), "host": socket.gethostname()}
    log.write(
        "run",
        action=action,
        thread=thread_id,
        question=question,
        settings=settings,
        **wanted,
        **here,
    )
    return log


def graph_config(thread_id: str, log: TrafficLog, context: Context) -> RunnableConfig:
    """The thread to checkpoint in, the traffic log's handler, and the tracing's names."""
    return {
        "configurable": {"thread_id": thread_id},
        "callbacks": [TrafficHandler(log)],
        "run_name": "deep_research",
        "tags": ["deep-research-cli"],
        "metadata": {"thread_id": thread_id, **tracing.run_metadata(context)},
    }


def ended_at_the_budget(records: list[dict[str, Any]]) -> bool:
    """Whether the session before this one ended with the budget's refusal (`BudgetExceeded`
    is raised before a call is sent), rather than killed or failed mid-call."""
    sessions = [r for r in records if r.get("kind") == "run"][:-1]  # this one's start is last
    last = sessions[-1] if sessions else {}
    error = str(last.get("error", ""))
    return last.get("action") == "end" and error.startswith(f"{BudgetExceeded.__name__}:")
