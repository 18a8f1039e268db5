"""One research session: start or resume a thread, show progress, ask the questions.

The graph checkpoints every step (to SQLite, or to PostgreSQL: `Home.target`), so a session
that dies (Ctrl-C, a crash, a dead model server) can be resumed: LangGraph keeps the writes
of research tasks that finished, and only unfinished work runs again.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StateSnapshot
from rich.console import Console

from deep_research.cli import clarify, plan
from deep_research.cli.args import ReportTarget, UsageError
from deep_research.cli.counts import totals
from deep_research.cli.report_file import finished, save_report, saved_report
from deep_research.cli.runs import Home, RunSource
from deep_research.cli.session_log import ended_at_the_budget, graph_config, open_log
from deep_research.cli.summary import report_status
from deep_research.cli.thread_state import durable_graph, status_of
from deep_research.cli.traffic import TrafficLog
from deep_research.cli.view import ProgressView, Tracker
from deep_research.config.settings import Context
from deep_research.errors import ReadableError
from deep_research.runtime import process
from deep_research.text.secrets import Redactor

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph


class ResumeError(ReadableError, RuntimeError):
    """The thread cannot be resumed (it never started, or it has nothing left to do)."""


class NotFinishedError(UsageError):
    """A follow-up names a thread that has not finished: it is resumed, not followed up."""


@dataclass(frozen=True)
class Outcome:
    thread_id: str
    values: dict[str, Any]
    seconds: float
    report: Path | None  # the saved report (an earlier session's when `already_done`)
    already_done: bool = False  # finished and saved before this session: nothing was run


async def run_research(
    home: Home,
    target: ReportTarget,
    console: Console,
    context: Context,
    *,
    thread_id: str,
    question: str,
    settings: dict[str, Any],
    resume: bool,
    interactive: bool,
    asked: dict[str, str | None] | None = None,
    follow_up: bool = False,
) -> Outcome:
    """Run a new thread, resume one, or ask a finished one a new `question` (`follow_up`),
    until its report is written and saved. `asked` (`--out`, `--export`) is logged with the
    session, for a later `--resume` to honour."""
    started = time.monotonic()
    runs = home.runs()
    wanted = {key: value for key, value in (asked or {}).items() if value}
    if follow_up:  # refused before anything is logged: the thread's questions stay its own
        await _check_finished(home, thread_id)
    action = "follow_up" if follow_up else "resume" if resume else "start"
    log = open_log(home, runs, thread_id, question, settings, action=action, wanted=wanted)
    config = graph_config(thread_id, log, context)
    run = _Session(
        target, console, context, runs, log, thread_id, question, interactive, config, started
    )
    try:
        async with durable_graph(home) as graph:
            payload: Any = {"messages": [{"role": "user", "content": question}]}
            earlier: StateSnapshot | None = None
            if resume:
                status = await status_of(graph, thread_id)
                earlier = await graph.aget_state(config)
                if status == "done":
                    return await _done_before(run, earlier.values, wanted)
                if status == "not started":
                    raise ResumeError(f"thread {thread_id!r} has no checkpoint to resume from")
                if ended_at_the_budget(await asyncio.to_thread(runs.records, thread_id)):
                    # Refused before it sent anything: nothing was in flight, so the step
                    # the budget stopped starts fresh (runtime/process.py), its call not
                    # counted again at its worst case.
                    process.hand_over((thread_id, ""), "")
                # None continues from the last checkpoint; a waiting question is asked first.
                payload = await run.answer(earlier) if earlier.interrupts else None
            elif follow_up:  # its sources and findings stay: the panel counts them
                earlier = await graph.aget_state(config)
            tracker = await _tracker(run, earlier, follow_up=follow_up)
            state = await _research(graph, run, home, tracker, payload)
        return run.outcome(state.values, await run.save(state.values))
    except Exception as error:
        log.write("run", action="end", status="failed", error=f"{type(error).__name__}: {error}")
        raise
    finally:
        log.close()


async def _check_finished(home: Home, thread_id: str) -> None:
    """`NotFinishedError` unless the thread is done: a follow-up starts from a finished run."""
    async with durable_graph(home) as graph:
        status = await status_of(graph, thread_id)
    if status != "done":
        raise NotFinishedError(
            f"thread {thread_id!r} is not finished ({status}): continue it with "
            f"deep-research --resume {thread_id}, then ask the follow-up"
        )


@dataclass(frozen=True)
class _Session:
    """What the steps of one session share: where the report goes, the log, how to ask."""

    target: ReportTarget
    console: Console
    context: Context
    runs: RunSource
    log: TrafficLog
    thread_id: str
    question: str
    interactive: bool
    config: RunnableConfig
    started: float  # time.monotonic() at the session's start

    def outcome(
        self, values: dict[str, Any], report: Path, *, already_done: bool = False
    ) -> Outcome:
        seconds = time.monotonic() - self.started
        return Outcome(self.thread_id, values, seconds, report, already_done=already_done)

    async def save(self, values: dict[str, Any]) -> Path:
        """Save the run's report, and log the run's end."""
        # The report is model output: a key it echoed (from a page, say) is scrubbed too.
        report = Redactor()(values["final_report"])
        folder, name = self.target.folder, self.target.name
        status = report_status(values, self.thread_id)
        path = await asyncio.to_thread(save_report, folder, self.question, report, name, status)
        self.log.write("run", **finished(path, values, self.context, self.runs, self.thread_id))
        return path

    async def answer(self, state: StateSnapshot) -> Command[Any]:
        """The answer to the question the run waits on."""
        return await _answer(self.console, state.interrupts[0].value, self.interactive, self.log)


async def _done_before(run: _Session, values: dict[str, Any], wanted: dict[str, str]) -> Outcome:
    """A resumed thread that was done: nothing runs. Its report is the one saved (or a copy
    where `--out` asks now), or, if the session stopped while saving it, saved now."""
    # Off the loop: a file, or a query to the shared run list.
    saved = await asyncio.to_thread(saved_report, run.runs, run.thread_id)
    if saved is None:  # stopped while saving the report: save it now
        return run.outcome(values, await run.save(values))
    if wanted.get("out"):  # finished, and asked now for a copy elsewhere
        saved = await run.save(values)
    else:
        run.log.write("run", action="end", status="already done")
    return run.outcome(values, saved, already_done=True)


async def _tracker(
    run: _Session, earlier: StateSnapshot | None, *, follow_up: bool = False
) -> Tracker:
    """The progress panel's counts, going on from a resumed or followed-up thread's
    `earlier` state."""
    # A resumed run's view goes on from the searches earlier sessions sent, as the
    # summary counts them: one `search` event each in the log. Not `searches_used`:
    # mid-run it also counts the shares handed to unfinished research tasks.
    sent = totals(await asyncio.to_thread(run.runs.records, run.thread_id))
    tracker = Tracker(
        run.thread_id,
        phase="starting" if earlier is None or follow_up else "resuming",
        totals=sent,
        search_cap=run.context.max_searches_per_run,
        max_cost_usd=run.context.max_cost_usd,
    )
    if earlier is not None:  # the pages that research finished in earlier sessions retrieved
        tracker.settle(earlier.values)
    return tracker


async def _research(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    run: _Session,
    home: Home,
    tracker: Tracker,
    payload: Any,
) -> StateSnapshot:
    """Run the graph from `payload`, asking each question it stops on, until it ends."""
    while True:
        view = ProgressView(tracker, run.console, home)
        view.start()
        try:
            await _stream(graph, run, payload, view, tracker)
        finally:
            view.stop()
        state = await graph.aget_state(run.config)
        if not state.interrupts:
            return state
        payload = await run.answer(state)


async def _stream(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    run: _Session,
    payload: Any,
    view: ProgressView,
    tracker: Tracker,
) -> None:
    """One stretch of the run, to its end or its next question: each progress event is
    logged and shown, and each update to the top graph's state counted."""
    # subgraphs=True: searches are reported from inside research subgraphs.
    # "sync": a model call's reservation is on disk before the call is sent.
    # "updates": what the top graph's state takes (its pages, the report's
    # citation check), so the panel counts them as the summary does.
    async for namespace, mode, chunk in graph.astream(
        payload,
        run.config,
        context=run.context,
        stream_mode=["custom", "updates"],
        subgraphs=True,
        durability="sync",
    ):
        if mode == "custom":
            assert isinstance(chunk, dict)
            run.log.write("progress", **chunk)
            view.show(chunk)
        elif not namespace and isinstance(chunk, dict):
            for update in chunk.values():
                if isinstance(update, dict):
                    tracker.settle(update)


async def _answer(
    console: Console, request: dict[str, Any], interactive: bool, log: TrafficLog
) -> Command[Any]:
    """Show the clarifying questions or the plan and read one answer (or say why none is
    asked for)."""
    log.write("interrupt", **request)
    if "plan" in request:  # the plan review (deep_research/nodes/plan_review.py)
        value = await plan.ask(console, request, interactive)
    else:
        value = await clarify.ask(console, request, interactive)
    log.write("answer", answer=value)
    return Command(resume=value)
