"""runtime.tracing: what each traced run is called, and traces scrubbed before they leave."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import langsmith
import pytest
from langchain_core.tracers.context import collect_runs
from langsmith import utils as langsmith_utils

from deep_research.config.settings import Context
from deep_research.runtime import tracing
from deep_research.text.secrets import REDACTED
from tests.support.fakes.langsmith_server import FakeLangSmithServer

SECRET = "tvly-" + "Q" * 20


def test_run_metadata_holds_the_caps_and_no_endpoint_or_key() -> None:
    context = Context(search_provider="ddgs", max_searches_per_run=7, max_researcher_turns=2)
    metadata = tracing.run_metadata(context)
    assert metadata["search_provider"] == "ddgs"
    assert (metadata["max_searches_per_run"], metadata["max_researcher_turns"]) == (7, 2)
    assert set(metadata) <= set(Context.model_fields)  # only `Context` values, never endpoints


def test_model_config_tags_role_and_model() -> None:
    config = tracing.model_config("researcher", "local:qwen")
    assert config.get("tags") == ["role:researcher", "model:local:qwen"]
    assert config.get("metadata") == {"role": "researcher", "model": "local:qwen"}


def test_research_config_names_the_run_by_a_short_one_line_topic() -> None:
    topic = "heat\npumps\t in   cold " + "x" * 200
    config = tracing.research_config(topic, Context(researcher_model="local:r"))
    name = config.get("run_name", "")
    assert name.startswith("research: heat pumps in cold x") and name.endswith("…")
    assert len(name) == len("research: ") + tracing.NAME_CHARS and "\n" not in name
    assert config.get("metadata", {})["topic"] == topic  # the whole topic is kept
    assert "model:local:r" in config.get("tags", [])
    short = tracing.research_config("solar", Context())
    assert short.get("run_name") == "research: solar"


async def test_named_search_traces_one_run_and_returns_its_result() -> None:
    async def run() -> list[str]:
        return ["a result"]

    with collect_runs() as runs:
        result = await tracing.named_search("  heat\npumps ", "tavily", run)
    assert result == ["a result"]
    [traced] = runs.traced_runs
    assert traced.name == "search: heat pumps"
    assert set(traced.tags or []) >= {"search", "search_provider:tavily"}
    assert traced.extra["metadata"]["search_provider"] == "tavily"


async def test_named_search_lets_the_runs_error_through() -> None:
    async def run() -> None:
        raise LookupError("provider down")

    with pytest.raises(LookupError, match="provider down"):
        await tracing.named_search("q", "ddgs", run)


@pytest.fixture
def langsmith_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangSmithServer]:
    """LangSmith's settings pointing at a local receiver; langsmith's env cache is reset."""
    with FakeLangSmithServer() as server:
        monkeypatch.setenv("LANGSMITH_ENDPOINT", server.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_" + "0" * 32)
        monkeypatch.setenv("TAVILY_API_KEY", SECRET)
        langsmith_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]
        yield server
    langsmith_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]


def test_redact_traces_sends_runs_through_the_shared_redactor(
    langsmith_env: FakeLangSmithServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured: list[Any] = []
    monkeypatch.setattr(langsmith_utils, "tracing_is_enabled", lambda: True)
    monkeypatch.setattr(langsmith, "configure", lambda client: configured.append(client))
    tracing.redact_traces()
    [client] = configured
    inputs = {"query": f"key {SECRET}\x00<b>", "headers": {"Authorization": "Bearer abc123xyz"}}
    client.create_run("search: q", inputs, "chain", outputs={"error": f"echo {SECRET}"})
    client.flush()
    client.cleanup()
    [run] = langsmith_env.runs().values()
    sent = json.dumps(run)
    assert SECRET not in sent and "abc123xyz" not in sent
    assert run["inputs"]["query"].startswith(f"key {REDACTED}")
    assert run["inputs"]["headers"]["Authorization"] == REDACTED


def test_redact_traces_makes_no_client_when_tracing_is_off(
    langsmith_env: FakeLangSmithServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured: list[Any] = []
    monkeypatch.setattr(langsmith_utils, "tracing_is_enabled", lambda: False)
    monkeypatch.setattr(langsmith, "configure", lambda client: configured.append(client))
    tracing.redact_traces()
    assert configured == [] and langsmith_env.received == []
