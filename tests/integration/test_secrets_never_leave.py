"""Secrets: a model server or search API that echoes the key it was sent never gets it out.

The keys here have no credential shape (no `sk-`, `tvly-`, `Bearer`), so only knowing the
environment's values can catch them. Every way text leaves the process is checked: stdout,
stderr, the CLI's files (checkpoints, traffic log, report), the thread state, the progress
stream, LangSmith traces, and every request body the model server received.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from deep_research.config.settings import Context
from deep_research.graph import builder
from deep_research.llm.models import ModelServerError, role_model
from deep_research.nodes.finalize import finalize
from deep_research.runtime import progress
from deep_research.text.secrets import REDACTED
from tests.support.brain import ResearchBrain, role_of
from tests.support.cli import QUESTION, cli_env, run_cli
from tests.support.fakes.langsmith_server import FakeLangSmithServer
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, message_text
from tests.support.fakes.tavily_server import FakeTavilyServer

LLM_SECRET = "corp-llm-7f3a9c2b1d5e"
TAVILY_SECRET = "corp-search-93bd01fe77"
LANGSMITH_SECRET = "corp-trace-5521aa90cc"
SECRETS = (LLM_SECRET, TAVILY_SECRET, LANGSMITH_SECRET)
SEARCHED = "heat pump efficiency in cold climates"
DOOMED = "heat pump installation costs"


@dataclass
class EchoingBrain:
    """Both topics search (and Tavily echoes its key); the model server then answers the
    researcher of `DOOMED` with a 401 that quotes the model key, which makes a research gap.
    With `orchestrator_fails`, the very first orchestrator call gets that 401 instead."""

    orchestrator_fails: bool = False
    inner: ResearchBrain = field(default_factory=lambda: ResearchBrain(topics=[SEARCHED, DOOMED]))

    async def __call__(self, body: dict[str, Any]) -> Reply:
        role = role_of(body)
        messages = body["messages"]
        searched = any(m.get("role") == "tool" for m in messages)
        topic = next((message_text(m) for m in messages if m.get("role") == "user"), "")
        if (role == "orchestrator" and self.orchestrator_fails) or (
            role == "researcher" and searched and topic == DOOMED
        ):
            return Reply(status=401, error_message=f"Incorrect API key provided: {LLM_SECRET}")
        return await self.inner(body)


def echoing_tavily() -> FakeTavilyServer:
    return FakeTavilyServer(api_keys={"the-right-key"}, echo_key=True)


def secret_env(llm: ScriptedOpenAIServer, tavily: FakeTavilyServer, home: Path) -> dict[str, str]:
    return {
        **cli_env(llm, tavily, home),
        "LLM_API_KEY": LLM_SECRET,
        "TAVILY_API_KEY": TAVILY_SECRET,
    }


def assert_no_secret(where: str, seen: str | bytes) -> None:
    text = seen.decode(errors="replace") if isinstance(seen, bytes) else seen
    for secret in SECRETS:
        assert secret not in text, f"{secret} leaked into {where}"


def files_under(root: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in root.rglob("*") if path.is_file()}


@pytest.mark.slow
def test_keys_echoed_by_model_server_and_search_api_leave_no_trace_in_cli_run(
    tmp_path: Path,
) -> None:
    with (
        ScriptedOpenAIServer(EchoingBrain()) as llm,
        echoing_tavily() as tavily,
        FakeLangSmithServer() as langsmith,
    ):
        env = {
            **secret_env(llm, tavily, tmp_path),
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": langsmith.url,
            "LANGSMITH_API_KEY": LANGSMITH_SECRET,
            "LANGSMITH_PROJECT": "deep-research-test",
        }
        result = run_cli(tmp_path, env, "--no-clarify", QUESTION)
        # The echoing Tavily's results are keys, not pages the report can cite: a report
        # that cites nothing is saved and marked (exit 3), not a plain success.
        assert result.returncode == 3, result.stderr
        assert "status        no_sources" in result.stdout
        received, bodies = langsmith.received, llm.requests
    # The servers really echoed the keys they were sent.
    assert tavily.auth_headers and all(TAVILY_SECRET in h for h in tavily.auth_headers)
    assert len(tavily.queries) == 2
    [report_path] = (tmp_path / "reports").glob("*.md")
    report = report_path.read_text()
    assert "## Research gaps" in report and DOOMED in report and REDACTED in report, report

    assert_no_secret("stdout", result.stdout)
    assert_no_secret("stderr", result.stderr)
    for path, data in files_under(tmp_path / ".deep_research").items():
        assert_no_secret(path, data)  # checkpoints.sqlite (and its WAL), traffic log
    assert_no_secret("the report", report)
    for body in bodies:
        assert_no_secret("a request to the model server", json.dumps(body))
    # The researcher was told its search failed, without the search API's key.
    told = [json.dumps(b) for b in bodies if "Unauthorized" in json.dumps(b)]
    assert told and all(REDACTED in text for text in told)
    assert received, "traces were sent"
    for request in received:
        headers = {k: v for k, v in request.headers.items() if k.lower() != "x-api-key"}
        assert_no_secret(f"the trace upload {request.path}", f"{request.path} {headers} ")
        assert_no_secret(f"the trace upload {request.path}", request.body)


@pytest.mark.slow
def test_orchestrator_failing_on_first_call_leaves_no_key_in_checkpoints(tmp_path: Path) -> None:
    with (
        ScriptedOpenAIServer(EchoingBrain(orchestrator_fails=True)) as llm,
        echoing_tavily() as tavily,
    ):
        result = run_cli(tmp_path, secret_env(llm, tavily, tmp_path), "--no-clarify", QUESTION)
    assert result.returncode == 1, result.stderr
    assert "401" in result.stderr and REDACTED in result.stderr
    assert_no_secret("stdout", result.stdout)
    assert_no_secret("stderr", result.stderr)
    stored = files_under(tmp_path / ".deep_research")
    assert any(path.endswith("checkpoints.sqlite") for path in stored)
    assert any(b"AuthenticationError" in data for data in stored.values()), "the error is kept"
    for path, data in stored.items():
        assert_no_secret(path, data)


async def test_keys_echoed_to_python_api_stay_out_of_state_events_and_prompts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with ScriptedOpenAIServer(EchoingBrain()) as llm, echoing_tavily() as tavily:
        for name, value in secret_env(llm, tavily, tmp_path).items():
            monkeypatch.setenv(name, value)
        path = tmp_path / "checkpoints.sqlite"
        config: Any = {"configurable": {"thread_id": "echo"}}
        events: list[Any] = []
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            graph = builder.compile(checkpointer=saver)
            async for _, mode, chunk in graph.astream(
                {"messages": [{"role": "user", "content": QUESTION}]},
                config,
                context={"allow_clarification": False},
                stream_mode=["custom", "values"],
                subgraphs=True,
            ):
                events.append(chunk) if mode == "custom" else None
            snapshot = await graph.aget_state(config)
        bodies = llm.requests
    failed = [e for e in events if e["event"] in ("research_failed", "search_failed")]
    assert {e["event"] for e in failed} == {"research_failed", "search_failed"}
    assert all(REDACTED in e["error"] for e in failed), failed
    assert snapshot.values["failures"][0]["topic"] == DOOMED
    assert_no_secret("the progress stream", json.dumps(events))
    assert_no_secret("the thread state", json.dumps(snapshot.values, default=repr))
    assert_no_secret("the final report", snapshot.values["final_report"])
    assert_no_secret("checkpoints.sqlite", b"".join(files_under(tmp_path).values()))
    for body in bodies:
        assert_no_secret("a request to the model server", json.dumps(body))


async def test_model_error_quoting_the_key_is_scrubbed_before_it_propagates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    echo = Reply(status=401, error_message=f"Incorrect API key provided: {LLM_SECRET}")
    with ScriptedOpenAIServer(lambda body: echo) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_API_KEY", LLM_SECRET)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        model = role_model(Context(), "orchestrator")
        with pytest.raises(ModelServerError) as raised:
            await model.ask([HumanMessage(QUESTION)])
    # What LangGraph stores for a failed task (`repr`) and what a handler prints (`str`).
    assert_no_secret("the error", f"{raised.value!r} {raised.value}")
    assert "HTTP 401" in str(raised.value) and REDACTED in str(raised.value)


async def test_a_key_pasted_into_a_message_never_reaches_the_model_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with ScriptedOpenAIServer(lambda body: Reply(content="noted")) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_API_KEY", LLM_SECRET)
        monkeypatch.setenv("TAVILY_API_KEY", TAVILY_SECRET)
        model = role_model(Context(), "researcher")
        await model.ask([HumanMessage(f"search with {TAVILY_SECRET}, or else {LLM_SECRET}")])
        [body] = llm.requests
        [auth] = llm.auth_headers
    assert auth == f"Bearer {LLM_SECRET}", "the model's own key still goes in its header"
    assert_no_secret("the request body", json.dumps(body))
    assert message_text(body["messages"][-1]) == f"search with {REDACTED}, or else {REDACTED}"


class _EmitState(TypedDict):
    done: bool


async def test_progress_events_never_carry_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", TAVILY_SECRET)

    def noisy(state: _EmitState) -> dict[str, Any]:
        progress.emit("search_failed", id="t1", query="q", error=f"server said {TAVILY_SECRET}")
        return {"done": True}

    graph = StateGraph(_EmitState).add_node(noisy).add_edge(START, "noisy").compile()
    events = [chunk async for chunk in graph.astream({"done": False}, stream_mode="custom")]
    assert events == [
        {"event": "search_failed", "id": "t1", "query": "q", "error": f"server said {REDACTED}"}
    ]


def test_research_gaps_stored_with_a_key_are_published_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failure recorded before redaction (an older checkpoint) still reports cleanly."""
    monkeypatch.setenv("LLM_API_KEY", LLM_SECRET)
    state: Any = {
        "messages": [AIMessage("# Report\n\nNothing found.", id="draft")],
        "sources": [],
        "failures": [{"topic": DOOMED, "error": f"AuthenticationError: bad key {LLM_SECRET}"}],
    }
    report = finalize(state)["final_report"]
    assert "## Research gaps" in report and f"bad key {REDACTED}" in report
    assert_no_secret("the report", report)
