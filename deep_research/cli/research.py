"""`deep-research "question"`, `--resume THREAD_ID` and `--follow-up THREAD_ID "question"`:
run the research, then its summary."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from deep_research.cli.advice import budget_words, unsourced
from deep_research.cli.args import (
    HOME,
    ReportTarget,
    UsageError,
    report_target,
    research_parser,
    settings_from,
)
from deep_research.cli.counts import totals
from deep_research.cli.export import export_beside, export_formats
from deep_research.cli.follow_ups import questions
from deep_research.cli.plain import plain
from deep_research.cli.summary import (
    citation_line,
    cost_line,
    report_status,
    sources_lines,
    totals_lines,
)
from deep_research.cli.thread_choice import ThreadToRun, chosen_thread, followed
from deep_research.cli.thread_lock import only_session
from deep_research.text.wording import one_line

if TYPE_CHECKING:
    from rich.console import Console

    from deep_research.cli.session import Outcome
    from deep_research.config.settings import Context
    from deep_research.export import Format


# The report was saved, but it cites no page the research retrieved (`state.ReportStatus`
# other than "complete"): a script must not take it for a finished report (exit 0).
UNSOURCED_EXIT = 3


def ask(argv: list[str], console: Console) -> int:
    """Research a new question, or resume a stopped run, and print its summary; in a
    terminal, then ask the follow-up questions typed after it (`cli.follow_ups`).

    Ctrl-C ends the process (exit 130) once the run is saved."""
    args = research_parser().parse_args(argv)
    thread = chosen_thread(args, console)
    interactive = sys.stdin.isatty()
    code, outcome = _research(console, thread, args.out, interactive)
    # The offer needs a reader at a terminal: not a script's run, nor one whose output
    # goes to a file (the prompt would be written there and wait unseen).
    if not (interactive and sys.stdout.isatty() and outcome.report is not None):
        return code
    for question in questions(console, outcome.thread_id):
        # A follow-up's report is a new file beside the first (an --out names the first).
        asked = (None, args.export)
        thread = followed(outcome.thread_id, settings_from(args), question, asked, console)
        more, outcome = _research(console, thread, None, interactive)
        code = max(code, more)  # the session's worst: 1 (an export failed), 3 (unsourced)
        if outcome.report is None:  # stopped without a report: resume it before asking more
            break
    return code


def _research(
    console: Console, thread: ThreadToRun, out: str | None, interactive: bool
) -> tuple[int, Outcome]:
    """One session of `thread` to its summary and exports: the exit code, and the outcome."""
    # Imported only for a run: `Context` (pydantic); the graph, openai and LangChain in `_run`.
    from deep_research.config.settings import load_context

    context = load_context(thread.settings)  # a bad value stops here, before anything is written
    _check_mcp_servers(context)  # so does an unusable MCP_SERVERS_FILE
    target = _report_target(thread.out, out)  # so does an --out naming an existing file
    # A format that is unknown or not installed stops here too, not after the run.
    formats = export_formats(thread.export) if thread.export else []
    if not interactive:
        context = _unattended(console, context, thread.settings)
    if needs_relevance_model(context):
        # Before the first model call: a missing or damaged model stops the run here
        # (WeightsUnavailable says what to do), and a first run downloads it with a bar.
        from deep_research.embedding.loader import weights

        weights(say=lambda line: print(line, file=sys.stderr, flush=True), download=True)
    outcome = _run(console, thread, context, target, interactive)
    code = print_summary(console, outcome, context)
    return _export(console, outcome, formats, code), outcome


def _report_target(out: str | None, given: str | None) -> ReportTarget:
    """Where the report goes (`out`); one the user did not give now (`given`) is the one the
    resumed thread was started with, and an error about it says so."""
    try:
        return report_target(out)
    except UsageError as error:
        if out == given:
            raise
        started_with = "the --out this thread was started with; give --out PATH"
        raise UsageError(f"{error} ({started_with})") from None


def _check_mcp_servers(context: Context) -> None:
    """`ConfigError` for an unusable `MCP_SERVERS_FILE` when the run may call its tools."""
    from deep_research.config import mcp_servers
    from deep_research.config.names import ConfigError

    if context.max_mcp_calls_per_run and (problem := mcp_servers.problem()):
        raise ConfigError(problem)


def _unattended(console: Console, context: Context, settings: dict[str, Any]) -> Context:
    """The context when stdin is not a terminal: nobody answers the clarifying questions or
    reviews the plan, so both are off (in `settings` too, which the session logs)."""
    from deep_research.config.settings import load_context

    if context.allow_clarification:
        console.print("stdin is not a terminal: skipping clarifying questions (--no-clarify).")
        settings["allow_clarification"] = False
        context = load_context(settings)
    if context.review_plan:
        console.print("stdin is not a terminal: skipping the plan review (review_plan off).")
        settings["review_plan"] = False
        context = load_context(settings)
    return context


def _run(
    console: Console, thread: ThreadToRun, context: Context, target: ReportTarget, interactive: bool
) -> Outcome:
    """The research session, until its report is saved; Ctrl-C ends the process."""
    # Imported only for a run: the graph, openai and LangChain.
    from langchain_core.tracers.langchain import wait_for_all_tracers

    from deep_research.cli.interrupt import exit_now, run_until_interrupted
    from deep_research.cli.session import run_research

    thread_id = thread.thread_id
    try:
        with only_session(HOME, thread_id):
            console.print(f"Thread {thread_id} · resume with: deep-research --resume {thread_id}")
            if thread.follow_up:
                console.print(plain(f"Follow-up on {thread_id}: {one_line(thread.question, 200)}"))
            return run_until_interrupted(
                run_research(
                    HOME,
                    target,
                    console,
                    context,
                    thread_id=thread_id,
                    question=thread.question,
                    settings=thread.settings,
                    resume=thread.resume,
                    follow_up=thread.follow_up,
                    interactive=interactive,
                    asked={"out": thread.out, "export": thread.export},
                ),
                on_stop=lambda: print("stopping…", file=sys.stderr, flush=True),
            )
    except KeyboardInterrupt:
        print(f"Stopped. Resume with: deep-research --resume {thread_id}", file=sys.stderr)
        # Threads still loading the model or reading the terminal are not waited for (see
        # `deep_research.cli.interrupt`); LangSmith gets a moment for the last traces.
        exit_now(130, last=wait_for_all_tracers)
    finally:
        # LangSmith sends runs from a background thread; without this, the last ones
        # (the run's end, the report) may be lost when the process exits.
        wait_for_all_tracers()


def _export(console: Console, outcome: Outcome, formats: list[Format], code: int) -> int:
    """Export the saved report as `--export` asked; the exit code is the summary's `code`,
    or 1 for an export that could not be made."""
    if not formats:
        return code
    if outcome.already_done and not (outcome.report and outcome.report.is_file()):
        # A thread done in an earlier session: its report was moved or deleted since.
        console.print(plain(f"Export skipped: the report {outcome.report} is no longer there."))
        return code or 1
    if outcome.report is not None:  # this session's, or an earlier one's
        from deep_research.errors import DeepResearchError

        try:
            export_beside(outcome.report, formats, console)
        except DeepResearchError as failure:  # the report is saved; its exit code stays
            console.print(plain(f"Export failed: {failure}"))
            return code or 1
    return code


def needs_relevance_model(context: Context) -> bool:
    """Whether a run needs MiniLM before it may start: it searches, and filters by relevance
    (`relevance_filter=false` asks to go on without; memory then needs it or goes unused)."""
    return context.relevance_filter and context.max_searches_per_run > 0


def print_summary(console: Console, outcome: Outcome, context: Context) -> int:
    """The closing summary, and the exit code its report earns (`UNSOURCED_EXIT` for one
    that cites no retrieved page). Every line is plain text (a path or a count may hold `[`)."""
    from rich.text import Text

    values = outcome.values
    records = HOME.runs().records(outcome.thread_id)  # every session's, wherever it ran
    status = report_status(values, outcome.thread_id)
    if outcome.already_done:
        saved = f" Its report: {outcome.report}" if outcome.report else ""
        console.print(
            plain(f"Thread {outcome.thread_id} was already done; nothing left to run.{saved}")
        )
    elif outcome.report is None:
        console.print(plain(f"Thread {outcome.thread_id} saved no report."))
    else:
        console.print(Text.assemble("\n", ("Report saved:", "bold"), " ", plain(outcome.report)))
    if status != "complete":
        advice = unsourced(status, values, context, records)
        console.print(Text.assemble(("Not a finished report", "bold yellow"), plain(advice)))
    minutes, seconds = divmod(int(outcome.seconds), 60)
    # One count of searches: those sent (the log's, as the live view counted them), of the
    # cap; the budget in state differs only by a stopped step's reservation, named if so.
    counted = values.get("searches_used", 0)
    run_totals = totals(records)
    searches = totals_lines(run_totals, cap=context.max_searches_per_run, counted=counted)
    lines = [f"wall time     {minutes}:{seconds:02d} (this session)", *searches]
    lines.append(cost_line(run_totals, context.max_cost_usd, values.get("cost_counted", 0)))
    if values.get("budget_note"):
        lines.append(f"budget        reached: {budget_words(context)} stopped the research early")
    lines += sources_lines(values)
    lines.append(citation_line(values))
    lines.append(f"traffic log   {HOME.log_path(outcome.thread_id)}")
    lines.append(f"status        {status}")
    for line in lines:
        console.print(plain(line))
    return 0 if status == "complete" else UNSOURCED_EXIT
