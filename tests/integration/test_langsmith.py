"""LangSmith traces from a real CLI run, received by a local stand-in for the LangSmith API.

"No key anywhere" means: no request URL, header or body the receiver got contains the
model server's key or the Tavily key, and the LangSmith key itself appears only as the
value of the `x-api-key` header, which is how the client authenticates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.brain import ResearchBrain
from tests.support.cli import LLM_KEY, QUESTION, TAVILY_KEY, cli_env, run_cli, traffic_records
from tests.support.fakes.langsmith_server import FakeLangSmithServer
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

LANGSMITH_KEY = "lsv2_pt_FAKE0123456789abcdef0123456789"
TOPICS = ["heat pump efficiency in cold climates", "heat pump installation costs"]


def test_traces_are_named_tagged_and_free_of_secrets(tmp_path: Path) -> None:
    with (
        ScriptedOpenAIServer(ResearchBrain(topics=TOPICS)) as llm,
        FakeTavilyServer() as tavily,
        FakeLangSmithServer() as langsmith,
    ):
        env = {
            **cli_env(llm, tavily, tmp_path),
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": langsmith.url,
            "LANGSMITH_API_KEY": LANGSMITH_KEY,
            "LANGSMITH_PROJECT": "deep-research-test",
        }
        result = run_cli(tmp_path, env, QUESTION)
        assert result.returncode == 0, result.stderr
        received, runs = langsmith.received, langsmith.runs()
        sent = len(tavily.queries)
    log, log_records = traffic_records(tmp_path)

    names = {run["name"] for run in runs.values()}
    expected = {"deep_research", "clarify", "orchestrate", "finalize"}
    expected |= {f"research: {topic}" for topic in TOPICS}
    expected |= {f"search: {topic} 0" for topic in TOPICS}
    assert expected <= names, sorted(names)

    models = [run for run in runs.values() if run.get("run_type") == "llm"]
    roles = {tag for run in models for tag in run["tags"] if tag.startswith("role:")}
    assert roles == {"role:orchestrator", "role:researcher"}
    assert all("model:local:test-model" in run["tags"] for run in models)
    searches = [run for run in runs.values() if run["name"].startswith("search: ")]
    assert all("search_provider:tavily" in run["tags"] for run in searches)

    [root] = [run for run in runs.values() if run["name"] == "deep_research"]
    metadata = root["extra"]["metadata"]
    assert metadata["thread_id"] == log.stem
    assert metadata["search_provider"] == "tavily" and metadata["max_searches_per_run"] == 25
    assert metadata["max_researchers_per_turn"] == 3
    # What the run cost, added at its end: local models are free, a Tavily search a credit.
    replies = [r for r in log_records if r["kind"] == "model_reply"]
    assert metadata["usage"]["calls"] == len(replies) > 0, metadata["usage"]
    assert metadata["usage"]["by_role"]["search"]["calls"] == sent == 2
    assert metadata["usd"] == pytest.approx(0.008 * sent) == metadata["usage"]["usd"]

    assert received and all(r.headers.get("x-api-key") == LANGSMITH_KEY for r in received)
    for request in received:
        other_headers = {k: v for k, v in request.headers.items() if k.lower() != "x-api-key"}
        seen = f"{request.path} {other_headers} ".encode() + request.body
        for secret in (LANGSMITH_KEY, LLM_KEY, TAVILY_KEY):
            assert secret.encode() not in seen, f"{secret[:8]}… sent in {request.path}"
