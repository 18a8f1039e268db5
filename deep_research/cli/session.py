"""One research session: start or resume a thread, show progress, ask the questions.

The graph checkpoints every step (to SQLite, or to PostgreSQL: `Home.target`), so a session
that dies (Ctrl-C, a crash, a dead model server) can be resumed: LangGraph keeps the writes
of research tasks that finished, and only unfinished work runs again.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from rich.console import Console
from rich.text import Text

from deep_research.cli import plan
from deep_research.cli.args import ReportTarget
from deep_research.cli.counts import totals
from deep_research.cli.plain import plain
from deep_research.cli.runs import Home, RunSource, durable_graph, status_of
from deep_research.cli.summary import report_status
from deep_research.cli.traffic import TrafficHandler, TrafficLog
from deep_research.cli.view import ProgressView, Tracker
from deep_research.config.settings import ROLES, Context
from deep_research.errors import ReadableError
from deep_research.runtime import tracing
from deep_research.text.secrets import Redactor

NO_ANSWER = "(No answer given; proceed with your best judgement.)"
MAX_NUMBERED = 9999  # `-2` … numbered names tried for one report before giving up


class ReportNameError(ReadableError, FileExistsError):
    """Every name tried for the report is taken."""


class ResumeError(ReadableError, RuntimeError):
    """The thread cannot be resumed (it never started, or it has nothing left to do)."""


@dataclass(frozen=True)
class Outcome:
    thread_id: str
    values: dict[str, Any]
    seconds: float
    report: Path | None  # the saved report (an earlier session's when `already_done`)
    already_done: bool = False  # finished and saved before this session: nothing was run


def save_report(reports: Path, question: str, report: str, name: str | None = None) -> Path:
    """Write `reports/<name>` or `reports/<date>-<slug>.md`, never overwriting a file: one
    that took the name meanwhile keeps it, and the report takes the next `-2`, `-3`…"""
    words = re.sub(r"[^a-z0-9]+", " ", question.lower()).split()[:8]
    first = Path(name or f"{date.today().isoformat()}-{'-'.join(words) or 'report'}.md")
    reports.mkdir(parents=True, exist_ok=True)
    path = reports / first
    for n in range(2, MAX_NUMBERED + 2):
        try:
            with path.open("x", encoding="utf-8") as file:  # "x": fails if it exists
                file.write(report)
            return path
        except FileExistsError:
            path = reports / f"{first.stem}-{n}{first.suffix}"
    raise ReportNameError(f"{reports / first} and {MAX_NUMBERED} numbered copies exist")


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
) -> Outcome:
    """Run a new thread, or resume one, until its report is written and saved. `asked`
    (`--out`, `--export`) is logged with the session, for a later `--resume` to honour."""
    started = time.monotonic()
    runs = home.runs()
    shared = (runs.shared, thread_id) if runs.shared is not None else None
    log = TrafficLog(home.log_path(thread_id), shared=shared)
    action = "resume" if resume else "start"
    wanted = {key: value for key, value in (asked or {}).items() if value}
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
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id},
        "callbacks": [TrafficHandler(log)],
        "run_name": "deep_research",
        "tags": ["deep-research-cli"],
        "metadata": {"thread_id": thread_id, **tracing.run_metadata(context)},
    }
    try:
        async with durable_graph(home) as graph:
            payload: Any = {"messages": [{"role": "user", "content": question}]}
            if resume:
                status = await status_of(graph, thread_id)
                state = await graph.aget_state(config)
                # Off the loop: a file, or a query to the shared run list.
                saved = await asyncio.to_thread(_saved_report, runs, thread_id)
                if status == "done" and saved is not None:
                    if wanted.get("out"):  # finished, and asked now for a copy elsewhere
                        report = Redactor()(state.values["final_report"])
                        saved = await asyncio.to_thread(
                            save_report, target.folder, question, report, target.name
                        )
                        log.write("run", **finished(saved, state.values, context, runs, thread_id))
                    else:
                        log.write("run", action="end", status="already done")
                    seconds = time.monotonic() - started
                    return Outcome(thread_id, state.values, seconds, saved, already_done=True)
                if status == "done":  # stopped while saving the report: save it now
                    report = Redactor()(state.values["final_report"])
                    path = await asyncio.to_thread(
                        save_report, target.folder, question, report, target.name
                    )
                    log.write("run", **finished(path, state.values, context, runs, thread_id))
                    return Outcome(thread_id, state.values, time.monotonic() - started, path)
                if status == "not started":
                    raise ResumeError(f"thread {thread_id!r} has no checkpoint to resume from")
                # None continues from the last checkpoint; a waiting question is asked first.
                payload = None
                if state.interrupts:
                    payload = await _answer(console, state.interrupts[0].value, interactive, log)
            # A resumed run's view goes on from the searches earlier sessions sent, as the
            # summary counts them: one `search` event each in the log. Not `searches_used`:
            # mid-run it also counts the quotas handed to unfinished research tasks.
            earlier = totals(await asyncio.to_thread(runs.records, thread_id))
            tracker = Tracker(
                thread_id,
                phase="resuming" if resume else "starting",
                totals=earlier,
                search_cap=context.max_searches_per_run,
                max_cost_usd=context.max_cost_usd,
            )
            if resume:  # the pages that research finished in earlier sessions retrieved
                tracker.settle(state.values)
            while True:
                view = ProgressView(tracker, console, home)
                view.start()
                try:
                    # subgraphs=True: searches are reported from inside research subgraphs.
                    # "sync": a model call's reservation is on disk before the call is sent.
                    # "updates": what the top graph's state takes (its pages, the report's
                    # citation check), so the panel counts them as the summary does.
                    async for namespace, mode, chunk in graph.astream(
                        payload,
                        config,
                        context=context,
                        stream_mode=["custom", "updates"],
                        subgraphs=True,
                        durability="sync",
                    ):
                        if mode == "custom":
                            assert isinstance(chunk, dict)
                            log.write("progress", **chunk)
                            view.show(chunk)
                        elif not namespace and isinstance(chunk, dict):
                            for update in chunk.values():
                                if isinstance(update, dict):
                                    tracker.settle(update)
                finally:
                    view.stop()
                state = await graph.aget_state(config)
                if not state.interrupts:
                    break
                payload = await _answer(console, state.interrupts[0].value, interactive, log)
        # The report is model output: a key it echoed (from a page, say) is scrubbed too.
        report = Redactor()(state.values["final_report"])
        path = await asyncio.to_thread(save_report, target.folder, question, report, target.name)
        log.write("run", **finished(path, state.values, context, runs, thread_id))
        return Outcome(thread_id, state.values, time.monotonic() - started, path)
    except Exception as error:
        log.write("run", action="end", status="failed", error=f"{type(error).__name__}: {error}")
        raise
    finally:
        log.close()


def finished(
    path: Path,
    values: dict[str, Any],
    context: Context,
    runs: RunSource | None = None,
    thread_id: str = "",
) -> dict[str, Any]:
    """The end record of a run that saved its report: with what an export's footer says
    (the models and the citation check), since the report file holds only the Markdown,
    and the report's status (`complete`, `no_sources`, `unverified`), which `done` alone
    does not tell. A shared run list (`runs`) keeps the report's absolute path: other
    directories read it."""
    models = {role: getattr(context, f"{role}_model") for role in ROLES}
    check = values.get("citation_check")
    where = path.absolute() if runs is not None and runs.shared is not None else path
    end = {"action": "end", "status": "done", "report": str(where), "models": models}
    end["report_status"] = report_status(values, thread_id)
    return end | ({"citation_check": check} if check else {})


def _saved_report(runs: RunSource, thread_id: str) -> Path | None:
    """The report a session of this thread saved, as its run records say (the latest), or
    None when none did."""
    records = runs.records(thread_id)
    saved = [r["report"] for r in records if r.get("kind") == "run" and r.get("report")]
    return Path(saved[-1]) if saved else None


async def _answer(
    console: Console, request: dict[str, Any], interactive: bool, log: TrafficLog
) -> Command[Any]:
    """Show the clarifying questions or the plan and read one answer (or say why none is
    asked for)."""
    log.write("interrupt", **request)
    if "plan" in request:  # the plan review (deep_research/nodes/plan_review.py)
        value = await plan.ask(console, request, interactive)
        log.write("answer", answer=value)
        return Command(resume=value)
    # The questions and the error are model output (or echo it): shown as plain text.
    if request.get("error"):
        console.print(plain(request["error"], style="red"))
    heading = f"Before researching, a few questions (round {request.get('round', 1)}):"
    console.print(Text.assemble("\n", plain(heading, style="bold")))
    for number, question in enumerate(request.get("questions", []), start=1):
        console.print(Text(f"  {number}. ").append_text(plain(question)))
    if interactive:
        console.print("Answer in one line (Enter: let the agent decide).")
        try:
            # Reading stdin blocks, so it runs in a thread and the event loop stays free.
            answer = (await asyncio.to_thread(console.input, "> ")).strip()
        except EOFError:
            answer = ""
    else:
        console.print("stdin is not a terminal, so no answer is read; the agent decides.")
        answer = ""
    answer = answer or NO_ANSWER
    log.write("answer", answer=answer)
    return Command(resume=answer)
