"""The traffic log: one JSON line per model request and reply, search, progress event and
answer, written to `.deep_research/runs/<thread>.jsonl` with secrets redacted.

Lines are handed to a writer thread, so the event loop never waits on the disk; each
line is flushed as written, so a run killed mid-way keeps everything up to the kill. With
a shared run list (DEEP_RESEARCH_CHECKPOINTS=postgresql://…) the same thread also sends it
the records about the run (`SHARED_KINDS`); model traffic stays in the file.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult

from deep_research.errors import DeepResearchError
from deep_research.text.controls import without_controls
from deep_research.text.secrets import Redactor

if TYPE_CHECKING:
    from deep_research.checkpoints.postgres import RunList

# Chain runs worth logging as tool calls: the names `deep_research.runtime.tracing` gives them.
TOOL_RUN_PREFIXES = ("research: ", "search: ", "fetch: ")
# What `runs`, `--resume` and the summaries read (cli/runs.py): the run's start, resumes
# and end, and the progress events they count searches and cost from.
SHARED_KINDS = ("run", "progress")


class TrafficLog:
    """Appends redacted records to a JSONL file from a background thread."""

    def __init__(
        self,
        path: Path,
        redactor: Redactor | None = None,
        shared: tuple[RunList, str] | None = None,
    ) -> None:
        self.path = path
        self._redact = redactor or Redactor()
        self._shared = shared  # the shared run list and this log's thread id
        self._lines: queue.SimpleQueue[tuple[str, dict[str, Any] | None] | None] = (
            queue.SimpleQueue()
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._write_all, name="traffic-log", daemon=True)
        self._thread.start()

    def write(self, kind: str, **fields: Any) -> None:
        record = self._redact({"t": round(time.time(), 3), "kind": kind, **fields})
        line = json.dumps(record, ensure_ascii=False, default=str)
        share = self._shared is not None and kind in SHARED_KINDS
        self._lines.put((line, json.loads(line) if share else None))

    def close(self) -> None:
        self._lines.put(None)
        self._thread.join()

    def _write_all(self) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            while (item := self._lines.get()) is not None:
                line, shared = item
                out.write(line + "\n")
                out.flush()
                if shared is not None and self._shared is not None:  # not after it ended
                    self._share(shared)
        if self._shared is not None:
            self._shared[0].close()

    def _share(self, record: dict[str, Any]) -> None:
        """Send a record to the shared run list; a failure is said once and ends sharing
        (the checkpointer on the same server fails the run if the server is gone)."""
        assert self._shared is not None
        runs, thread_id = self._shared
        try:
            runs.append(thread_id, [record])
        except DeepResearchError as error:
            print(
                f"deep-research: run list not updated: {without_controls(error)}", file=sys.stderr
            )
            runs.close()
            self._shared = None


def message_record(message: BaseMessage) -> dict[str, Any]:
    record: dict[str, Any] = {"type": message.type, "content": message.content}
    for attribute in ("name", "tool_call_id"):
        if value := getattr(message, attribute, None):
            record[attribute] = value
    if calls := getattr(message, "tool_calls", None):
        record["tool_calls"] = [{"name": c["name"], "args": c["args"]} for c in calls]
    return record


class TrafficHandler(BaseCallbackHandler):
    """LangChain callbacks → traffic records: model calls with tokens and timings, tool runs."""

    # Inline: the handler only enqueues a line, so running it in an executor would cost more.
    run_inline = True

    def __init__(self, log: TrafficLog) -> None:
        self.log = log
        self._started: dict[UUID, tuple[float, str, str]] = {}  # run → (start, role, name)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        params = kwargs.get("invocation_params") or {}
        role = str((metadata or {}).get("role", "model"))
        model = str(params.get("model") or params.get("model_name") or "")
        self._started[run_id] = (time.monotonic(), role, model)
        tools = [t.get("function", t).get("name") for t in params.get("tools") or []]
        self.log.write(
            "model_request",
            run=str(run_id),
            role=role,
            model=model,
            node=(metadata or {}).get("langgraph_node"),
            messages=[message_record(m) for m in messages[0]],
            tools=tools,
        )

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        start, role, model = self._started.pop(run_id, (time.monotonic(), "model", ""))
        generation = response.generations[0][0] if response.generations else None
        message = getattr(generation, "message", None)
        usage = getattr(message, "usage_metadata", None) or {}
        self.log.write(
            "model_reply",
            run=str(run_id),
            role=role,
            model=model,
            seconds=round(time.monotonic() - start, 3),
            tokens_in=usage.get("input_tokens", 0),
            tokens_out=usage.get("output_tokens", 0),
            # "length": the reply was cut at its completion limit (`replay` says so).
            finish_reason=(getattr(message, "response_metadata", None) or {}).get("finish_reason"),
            **(message_record(message) if message is not None else {}),
        )

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        start, role, model = self._started.pop(run_id, (time.monotonic(), "model", ""))
        self.log.write(
            "model_error",
            run=str(run_id),
            role=role,
            model=model,
            seconds=round(time.monotonic() - start, 3),
            # One line: a server's validation dump is ten (`llm.attempts` names its cause).
            error=" ".join(f"{type(error).__name__}: {error}".split())[:500],
        )

    def on_chain_start(
        self, serialized: dict[str, Any], inputs: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        name = str(kwargs.get("name") or "")
        if name.startswith(TOOL_RUN_PREFIXES):
            self._started[run_id] = (time.monotonic(), "tool", name)
            self.log.write("tool_start", run=str(run_id), name=name)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if run_id in self._started:
            start, _, name = self._started.pop(run_id)
            seconds = round(time.monotonic() - start, 3)
            self.log.write("tool_end", run=str(run_id), name=name, seconds=seconds)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        if run_id in self._started:
            start, _, name = self._started.pop(run_id)
            self.log.write(
                "tool_error",
                run=str(run_id),
                name=name,
                seconds=round(time.monotonic() - start, 3),
                # One line: a server's validation dump is ten (`llm.attempts` names its cause).
                error=" ".join(f"{type(error).__name__}: {error}".split())[:500],
            )
