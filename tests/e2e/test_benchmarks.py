"""`python -m benchmarks` runs from a checkout in one command and reports what it promises.

The README's quick command runs here as a subprocess (with `--json`, to read its numbers):
one cloud case with one research topic, against the scripted world. Only shapes and
ratios are checked, never seconds: this machine's speed is not the code's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from benchmarks.__main__ import markdown
from benchmarks.real_model import markdown as real_markdown
from deep_research.embedding import parts
from tests.support.cli import REPO
from tests.support.llama_server import PYTHON_VARIABLE, llama_python
from tests.support.readme import block_after, section
from tests.support.real_run import RUN_TIMEOUT

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

BENCHMARK_TIMEOUT = 600.0


def benchmark_json(*arguments: str) -> Any:
    """What `python ARGUMENTS --json` printed, run from the checkout as a user runs it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, *arguments, "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=BENCHMARK_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_readme_quick_benchmark_runs_and_reports_every_number() -> None:
    command = block_after("<!-- benchmark-quick", section("## Speed")).strip()
    assert command == "python -m benchmarks --quick"
    results = benchmark_json(*command.split()[1:])
    [case] = results["cases"]
    assert (case["profile"], case["k"]) == ("cloud", 1)
    assert set(case["roles"]) == {"orchestrator", "researcher"}, "clarification is off"
    assert case["roles"]["orchestrator"]["calls"] == 3, "plan, dispatch, report"
    assert case["roles"]["researcher"]["calls"] == 3, "two search rounds, then the report"
    assert case["searches"] == 4 and case["page_fetches"] > 0
    # Its cost: the benchmark's model is local (free), each Tavily search one credit.
    assert case["usage"]["calls"] == case["model_calls"] == 6, case["usage"]
    assert case["usd"] == pytest.approx(0.008 * case["searches"]) == case["usage"]["usd"]
    assert case["prompt_tokens"] > case["completion_tokens"] > 0
    # The wall time contains the model's critical path: the ratio can only be 1 or more.
    assert case["ratio"] >= 1 and case["model_critical_path_s"] > 0
    assert 0 < case["report_s"] <= case["wall_s"], "the report comes out before the run ends"
    assert 0 < case["parallel_efficiency"] <= 1
    assert all({"after", "before", "seconds", "cause"} <= set(g) for g in case["idle_gaps"])
    # The CLI's checkpointer, as durable: every step's checkpoint written, and timed.
    writes = case["checkpoints"]
    assert writes["steps"] > case["model_calls"] and writes["task_writes"] >= writes["steps"]
    assert 0 < writes["seconds"] and 0 < writes["share_of_wall"] < 1, writes
    startup = results["startup"]
    assert 0 < startup["help_over_import"] < 1, "--help imports no graph"
    # The listings read Chroma's catalogue: cheaper than the graph, and than an add, which
    # loads chromadb and the model.
    for listing in ("memory_list_over_import", "library_list_over_import"):
        assert 0 < startup[listing] < min(1, startup["library_add_over_import"]), listing
    table = markdown(results)
    header = table.splitlines()[0]
    assert header in section("## Speed"), "the README's table has the benchmark's columns"


def test_the_real_model_benchmark_times_every_call_it_logged() -> None:
    python = llama_python()  # fails, never skips, without the real model's venv
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        PYTHON_VARIABLE: str(python),
    }
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.real_model", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT + 120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["n_ctx"] == 8192 and result["server_start_s"] > 0 and result["wall_s"] > 0
    # One slot serves the calls one by one: each logged call has the server's timings.
    assert result["replies"] == len(result["calls"]) >= 1
    assert result["server_completions"] >= result["replies"]
    for call in result["calls"]:
        assert call["generated"] >= 0 and call["generate_s"] >= 0 and call["prompt_s"] >= 0
        assert call["generate_s"] + call["prompt_s"] <= call["seconds"] + 1, call
    assert result["largest_prompt"] == max(c["tokens_in"] for c in result["calls"])
    assert "| role | calls |" in real_markdown(result)


def test_the_embedding_benchmark_compares_both_ways_in_fresh_processes() -> None:
    results = benchmark_json("-m", "benchmarks.embedding", "--texts", "4", "--busy", "1")
    assert results["cores"] == parts.cores()
    assert results["parts"]["parts"] == len(parts.deal(["passage"] * 4, parts.cores())) > 1
    assert results["one_thread"]["parts"] == 1
    for way in ("parts", "one_thread"):
        assert results[way]["wall"] > 0 and results[way]["cpu"] > 0, results
