"""cli/session_log.py: a session's first record, its graph config, and how the last one ended."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deep_research.cli.runs import Home
from deep_research.cli.session_log import ended_at_the_budget, graph_config, open_log
from deep_research.cli.traffic import TrafficHandler
from deep_research.config.settings import Context


def test_a_sessions_log_opens_with_what_was_asked_and_where_the_log_is(tmp_path: Path) -> None:
    home = Home(tmp_path / ".deep_research")
    settings = {"max_searches_per_run": 3}
    log = open_log(
        home, home.runs(), "t1", "Why?", settings, action="resume", wanted={"out": "r.md"}
    )
    try:
        config = graph_config("t1", log, Context())
    finally:
        log.close()
    first = json.loads(home.log_path("t1").read_text().splitlines()[0])
    assert first["kind"] == "run" and first["action"] == "resume" and first["thread"] == "t1"
    assert first["question"] == "Why?" and first["settings"] == settings
    assert first["out"] == "r.md" and first["log"] == str(home.log_path("t1").absolute())
    assert first["host"]
    assert config["configurable"] == {"thread_id": "t1"}
    assert [type(handler) for handler in config["callbacks"]] == [TrafficHandler]


def _run(action: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "run", "t": 1, "action": action, **fields}


def test_only_a_session_the_budget_refused_counts_as_ended_at_the_budget() -> None:
    budget = "BudgetExceeded: the run's cost budget is spent"
    this_start = _run("resume")
    assert ended_at_the_budget([_run("start"), _run("end", error=budget), this_start])
    assert not ended_at_the_budget([_run("start"), _run("end", error="Boom: x"), this_start])
    assert not ended_at_the_budget([_run("start"), this_start])  # killed mid-call: no end
    assert not ended_at_the_budget([this_start])
