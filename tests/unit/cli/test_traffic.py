"""`cli.traffic`: LangChain callbacks become redacted JSONL records, written in order.

tests/integration/test_secrets.py checks the redaction of objects written as text; these
check which callbacks become which records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from deep_research.checkpoints.target import CheckpointsConfigError
from deep_research.cli.traffic import TrafficHandler, TrafficLog, message_record
from deep_research.text.secrets import REDACTED, Redactor


def records(path: Path, drive: Any) -> list[dict[str, Any]]:
    log = TrafficLog(path, Redactor({"LLM_API_KEY": "sk-local-0123456789abcdef"}))
    try:
        drive(TrafficHandler(log))
    finally:
        log.close()
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_log_appends_each_record_in_order_with_its_time(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "t.jsonl"
    for n in range(2):
        log = TrafficLog(path)
        log.write("answer", answer=f"a{n}")
        log.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["answer"] for r in lines] == ["a0", "a1"] and all(
        r["kind"] == "answer" for r in lines
    )
    assert all(isinstance(r["t"], float) for r in lines)


def test_message_record_keeps_what_a_timeline_needs() -> None:
    call = {"name": "search", "args": {"query": "q"}, "id": "c1"}
    assert message_record(AIMessage("", tool_calls=[call])) == {
        "type": "ai",
        "content": "",
        "tool_calls": [{"name": "search", "args": {"query": "q"}}],
    }
    tool = message_record(ToolMessage("found", tool_call_id="c1", name="search"))
    assert tool == {"type": "tool", "content": "found", "name": "search", "tool_call_id": "c1"}


def test_a_model_call_is_a_request_then_a_reply_with_role_tokens_and_time(tmp_path: Path) -> None:
    run = uuid4()

    def drive(handler: TrafficHandler) -> None:
        handler.on_chat_model_start(
            {},
            [[HumanMessage("key sk-local-0123456789abcdef")]],
            run_id=run,
            metadata={"role": "researcher", "langgraph_node": "research"},
            invocation_params={"model": "m1", "tools": [{"function": {"name": "search"}}]},
        )
        reply = AIMessage(
            "done", usage_metadata={"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}
        )
        handler.on_llm_end(LLMResult(generations=[[ChatGeneration(message=reply)]]), run_id=run)

    request, reply = records(tmp_path / "t.jsonl", drive)
    assert request["kind"] == "model_request" and request["role"] == "researcher"
    assert (request["model"], request["node"], request["tools"]) == ("m1", "research", ["search"])
    assert request["messages"] == [{"type": "human", "content": f"key {REDACTED}"}]
    assert reply["kind"] == "model_reply" and reply["run"] == str(run) == request["run"]
    assert (reply["role"], reply["model"], reply["content"]) == ("researcher", "m1", "done")
    assert (reply["tokens_in"], reply["tokens_out"]) == (7, 2) and reply["seconds"] >= 0


def test_a_reply_keeps_why_the_model_stopped_and_an_error_is_one_line(tmp_path: Path) -> None:
    cut, failed = uuid4(), uuid4()

    def drive(handler: TrafficHandler) -> None:
        handler.on_chat_model_start({}, [[]], run_id=cut, metadata={"role": "orchestrator"})
        reply = AIMessage("# Report, cut", response_metadata={"finish_reason": "length"})
        handler.on_llm_end(LLMResult(generations=[[ChatGeneration(message=reply)]]), run_id=cut)
        handler.on_chat_model_start({}, [[]], run_id=failed, metadata={"role": "researcher"})
        handler.on_llm_error(ValueError("Error code: 500\n" + "field\n" * 10), run_id=failed)

    _, reply, _, error = records(tmp_path / "t.jsonl", drive)
    assert reply["finish_reason"] == "length"
    assert error["error"] == "ValueError: Error code: 500" + " field" * 10


def test_a_failed_model_call_names_the_error(tmp_path: Path) -> None:
    run = uuid4()

    def drive(handler: TrafficHandler) -> None:
        handler.on_chat_model_start({}, [[]], run_id=run, metadata={"role": "clarifier"})
        handler.on_llm_error(TimeoutError("slow"), run_id=run)

    [_, error] = records(tmp_path / "t.jsonl", drive)
    assert error["kind"] == "model_error" and error["role"] == "clarifier"
    assert error["error"] == "TimeoutError: slow"


def test_only_tool_runs_are_logged_among_chains(tmp_path: Path) -> None:
    search, fetch, node = uuid4(), uuid4(), uuid4()

    def drive(handler: TrafficHandler) -> None:
        handler.on_chain_start({}, {}, run_id=node, name="orchestrator")
        handler.on_chain_start({}, {}, run_id=search, name="search: heat pumps")
        handler.on_chain_start({}, {}, run_id=fetch, name="fetch: https://a.test/")
        handler.on_chain_end({}, run_id=node)
        handler.on_chain_end({}, run_id=search)
        handler.on_chain_error(ValueError("bad page"), run_id=fetch)

    kinds = [(r["kind"], r["name"]) for r in records(tmp_path / "t.jsonl", drive)]
    assert kinds == [
        ("tool_start", "search: heat pumps"),
        ("tool_start", "fetch: https://a.test/"),
        ("tool_end", "search: heat pumps"),
        ("tool_error", "fetch: https://a.test/"),
    ]


class _GoneRunList:
    """A shared run list whose server stopped answering: every append fails."""

    def __init__(self) -> None:
        self.appends = 0

    def append(self, thread_id: str, records: list[dict[str, Any]]) -> None:
        self.appends += 1
        raise CheckpointsConfigError("DEEP_RESEARCH_CHECKPOINTS: cannot use PostgreSQL x: gone")

    def close(self) -> None:
        pass


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_records_queued_before_sharing_ended_are_logged_here_and_not_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = _GoneRunList()
    log = TrafficLog(tmp_path / "t.jsonl", shared=(gone, "t1"))  # type: ignore[arg-type]
    for n in range(5):  # queued while sharing is still on
        log.write("run", action="start", n=n)
    log.close()
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert [json.loads(line)["n"] for line in lines] == [0, 1, 2, 3, 4]
    assert gone.appends == 1, "said once, then sharing ends"
    assert capsys.readouterr().err.count("run list not updated") == 1
