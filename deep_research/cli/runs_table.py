"""`deep-research runs`: every past run in this directory (or in the shared PostgreSQL run
list), one line each, with its status."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from deep_research.cli.args import HOME, UsageError
from deep_research.cli.plain import plain
from deep_research.cli.runs import RunRecord, list_runs, warn_skipped
from deep_research.cli.summary import done_status
from deep_research.cli.thread_state import durable_graph, status_of
from deep_research.errors import OldDataError
from deep_research.text.wording import first_line

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph
    from rich.console import Console

RUNS_HEADER = (
    "thread",
    "started",
    "status",
    "searches",
    "sources",
    "cost",
    "question",
    "report or error",
)
Row = tuple[str, str, str, str, str, str, str, str]
QUESTION_CHARS = 48
DETAIL_CHARS = 80


OLD_STATUS = "older version"  # a thread this version cannot resume (`--resume` says why)


async def _statuses(thread_ids: list[str]) -> list[str]:
    async with durable_graph(HOME) as graph:
        return await statuses_in(graph, thread_ids)


async def statuses_in(
    graph: CompiledStateGraph[Any, Any, Any, Any], thread_ids: list[str]
) -> list[str]:
    """Each thread's status from its checkpoints; a finished one with its report's status
    (`done, no sources`), as the run's summary judged it; one stopped in a step this
    version lacks, `older version`: the list still shows every other run."""
    statuses = []
    for thread_id in thread_ids:
        try:
            status: str = await status_of(graph, thread_id)
        except OldDataError:
            status = OLD_STATUS
        if status == "done":
            state = await graph.aget_state({"configurable": {"thread_id": thread_id}})
            status = done_status(state.values, thread_id)
        statuses.append(status)
    return statuses


def runs_table(rows: list[Row]) -> list[str]:
    """`runs` output: a header, then one line per run (thread, started, status, searches
    sent, sources its report lists, cost, question, report or error), each cell cut to one
    line so a long error cannot spill."""
    lines = []
    for thread, when, status, searches, sources, cost, question, detail in [RUNS_HEADER, *rows]:
        question = first_line(question, QUESTION_CHARS)
        line = f"{thread:<8}  {when:<16}  {status:<22}  {searches:>8}  {sources:>7}  {cost:>9}  "
        line += f"{question:<{QUESTION_CHARS}}"
        lines.append(f"{line}  {first_line(detail, DETAIL_CHARS)}".rstrip())
    return lines


def show_runs(argv: list[str], console: Console) -> int:
    import asyncio

    if argv:
        raise UsageError(f"`runs` takes no arguments, got {' '.join(argv)!r}")
    runs = list_runs(HOME)  # a bad DEEP_RESEARCH_CHECKPOINTS stops here (exit 2)
    if not runs:
        console.print(plain(f"No runs yet in {HOME.runs().where()}."))
        return 0
    for run in runs:
        warn_skipped(run)
    statuses = asyncio.run(_statuses([run.thread_id for run in runs]))
    rows = [
        (
            run.thread_id,
            datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M"),
            status,
            str(run.searches),
            "-" if run.sources is None else str(run.sources),
            "unknown" if run.cost is None else f"${run.cost:,.4f}",
            run.question,
            # The first question's report; each follow-up's is on its own line below.
            (run.answers[0][1] if status.startswith("done") else run.error) or "",
        )
        for run, status in zip(runs, statuses, strict=True)
    ]
    header, *lines = runs_table(rows)
    console.print(plain(header))
    for run, line in zip(runs, lines, strict=True):
        console.print(plain(line))
        for more in follow_up_lines(run):  # the thread's other questions, under it
            console.print(plain(more))
    return 0


def follow_up_lines(run: RunRecord) -> list[str]:
    """Under a thread's line, each follow-up question asked on it, with its report."""
    lines = []
    for question, report in run.answers[1:]:
        line = f"{'':<8}  follow-up: {first_line(question, QUESTION_CHARS)}"
        lines.append(f"{line}  {first_line(report or 'no report yet', DETAIL_CHARS)}")
    return lines
