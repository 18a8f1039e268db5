"""`deep-research`: ask a question, resume a run, list runs, or replay a traffic log.

    deep-research "question" [--no-clarify] [--review-plan] [--model SPEC] [--search NAME]
                             [--max-searches N]
    deep-research --resume THREAD_ID
    deep-research runs
    deep-research replay FILE
    deep-research doctor [--model SPEC] [--search NAME] [--set FIELD=VALUE] [--json]
    deep-research memory list | search QUERY | forget THREAD_ID | clear --yes
    deep-research library add PATH… | library list | library remove PATH

Every setting flag is a `Context` field (`--set FIELD=VALUE` reaches any of them), so the
CLI validates and explains bad values exactly as Studio and the SDK do. Errors are one
line on stderr: exit code 2 for bad input, 1 for a failed run, 130 for Ctrl-C.
"""

from __future__ import annotations

# Only light imports up here: `--help` and usage errors answer in about a tenth of a
# second. The graph, `Context` (pydantic), openai and LangChain are imported by the
# commands that use them.
import argparse
import sys
import textwrap
import uuid
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from deep_research.cli.plain import plain, terminal_console
from deep_research.cli.runs import (
    BadThreadIdError,
    Home,
    RunRecord,
    check_thread_id,
    list_runs,
    load_run,
    read_log,
)
from deep_research.cli.summary import citation_line, totals
from deep_research.config import envfile
from deep_research.config.names import (
    DEFAULT_LLM_MODEL,
    MODEL_PROVIDERS,
    SEARCH_CHOICES,
    SETTING_NAMES,
    ConfigError,
)
from deep_research.errors import DeepResearchError
from deep_research.text.controls import without_controls
from deep_research.text.wording import first_line

if TYPE_CHECKING:
    from rich.console import Console

    from deep_research.cli.session import Outcome
    from deep_research.config.settings import Context

HOME = Home(Path(".deep_research"))
REPORTS = Path("reports")
RUNS_HEADER = ("thread", "started", "status", "question", "report or error")
QUESTION_CHARS = 48
DETAIL_CHARS = 80
RESUME_HINT = " (the run is checkpointed: resume it with the thread id shown above)"


class UsageError(DeepResearchError, ValueError):
    """The command line is wrong; the message says how."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + message
        raise UsageError(f"{message} (see deep-research --help)")


def _epilog() -> str:
    settings = textwrap.fill(", ".join(SETTING_NAMES), width=78, subsequent_indent="  ")
    providers = textwrap.fill(", ".join(MODEL_PROVIDERS), width=78, subsequent_indent="  ")
    return (
        "search providers (--search, --set search_fallback=A,B):\n"
        f"  {', '.join(SEARCH_CHOICES)}. auto: tavily when TAVILY_API_KEY is set, else\n"
        "  searxng when SEARXNG_URL is set, else ddgs (keyless). library: only the\n"
        "  documents added with deep-research library add, never the web.\n"
        "model providers (--model, --set ROLE_model=provider:model):\n"
        "  local: the OpenAI-compatible server at LLM_BASE_URL; openai: OpenAI's cloud,\n"
        "  needs OPENAI_API_KEY; any other langchain provider with its extra installed, e.g.\n"
        "  anthropic, ollama, google_genai, groq, mistralai, bedrock (pip install -e\n"
        '  ".[anthropic]"; README: Configuration). All:\n'
        f"  {providers}\n"
        f"  e.g. --model local:{DEFAULT_LLM_MODEL}\n"
        "settings (--set FIELD=VALUE; each also read from its upper-cased environment\n"
        f"variable):\n  {settings}\n"
        "other commands:\n"
        "  deep-research doctor        check that a run can succeed, and what to change\n"
        "  deep-research runs          list past runs in this directory\n"
        "  deep-research replay FILE   print a run's traffic log as a timeline\n"
        "  deep-research memory list | search QUERY | forget THREAD_ID | clear --yes\n"
        "                              past research remembered (MEMORY_DIR or CHROMA_HOST)\n"
        "  deep-research library add PATH… | list | remove PATH\n"
        "                              your documents as a source, beside the web\n"
        "Ctrl-C stops a run at once; resume it with --resume THREAD_ID."
    )


def research_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="deep-research",
        description="Research a question on the web and write a cited Markdown report.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("question", nargs="?", help="what to research")
    parser.add_argument(
        "--resume", metavar="THREAD_ID", type=_thread_id, help="continue a stopped run"
    )
    parser.add_argument("--no-clarify", action="store_true", help="skip clarifying questions")
    parser.add_argument(
        "--review-plan", action="store_true", help="show the plan and wait for your approval"
    )
    parser.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        help="model for every role, e.g. local:NAME, openai:gpt-4.1, anthropic:claude-sonnet-4-5",
    )
    parser.add_argument(
        "--search",
        metavar="PROVIDER",
        help=f"search provider: {', '.join(SEARCH_CHOICES[:-1])} or {SEARCH_CHOICES[-1]} "
        "(default: auto)",
    )
    parser.add_argument("--max-searches", type=int, help="searches allowed for the whole run")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any other setting, e.g. --set max_researcher_turns=3 (repeatable; "
        "the fields are listed below)",
    )
    return parser


def _thread_id(text: str) -> str:
    try:
        return check_thread_id(text)
    except BadThreadIdError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _warn(record: RunRecord) -> None:
    """Say once, on stderr, that a run's traffic log had lines that could not be read."""
    if record.skipped:
        print(f"deep-research: {without_controls(record.skipped)}", file=sys.stderr)


def settings_from(args: argparse.Namespace) -> dict[str, Any]:
    """Command-line flags as `Context` field overrides (only the ones given)."""
    settings: dict[str, Any] = {}
    for item in args.set:
        field, sep, value = item.partition("=")
        if not sep or not field.strip():
            raise UsageError(f"--set wants FIELD=VALUE, got {item!r}")
        settings[field.strip()] = value.strip()
    if args.no_clarify:
        settings["allow_clarification"] = False
    if args.review_plan:
        settings["review_plan"] = True
    if args.model:
        settings.update(
            dict.fromkeys(("clarifier_model", "orchestrator_model", "researcher_model"), args.model)
        )
    if args.search:
        settings["search_provider"] = args.search
    if args.max_searches is not None:
        settings["max_searches_per_run"] = args.max_searches
    return settings


def readable(argument: str) -> str:
    """A command-line argument as text: bytes that are not UTF-8 (which Python keeps as lone
    surrogates) become U+FFFD, so the question can be logged, checkpointed and sent."""
    return argument.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def ask(argv: list[str], console: Console) -> int:
    """Research a new question, or resume a stopped run, and print its summary.

    Ctrl-C ends the process (exit 130) once the run is saved."""
    args = research_parser().parse_args(argv)
    settings = settings_from(args)
    if args.resume is not None and args.question:
        raise UsageError("give a question or --resume THREAD_ID, not both")
    if args.resume is not None:
        record = load_run(HOME, args.resume)
        _warn(record)
        thread_id, question = record.thread_id, record.question
        settings = {**record.settings, **settings}
    elif args.question and args.question.strip():
        thread_id, question = uuid.uuid4().hex[:8], readable(args.question).strip()
    else:
        raise UsageError('give a question, e.g. deep-research "Are heat pumps worth it?"')
    from langchain_core.tracers.langchain import wait_for_all_tracers

    from deep_research.cli.interrupt import exit_now, run_until_interrupted
    from deep_research.cli.session import run_research
    from deep_research.config.settings import load_context

    context = load_context(settings)  # a bad value stops here, before anything is written
    interactive = sys.stdin.isatty()
    if not interactive and context.allow_clarification:
        console.print("stdin is not a terminal: skipping clarifying questions (--no-clarify).")
        settings["allow_clarification"] = False
        context = load_context(settings)
    if not interactive and context.review_plan:
        console.print("stdin is not a terminal: skipping the plan review (review_plan off).")
        settings["review_plan"] = False
        context = load_context(settings)
    console.print(f"Thread {thread_id} · resume with: deep-research --resume {thread_id}")
    try:
        outcome = run_until_interrupted(
            run_research(
                HOME,
                REPORTS,
                console,
                context,
                thread_id=thread_id,
                question=question,
                settings=settings,
                resume=args.resume is not None,
                interactive=interactive,
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
    print_summary(console, outcome, context)
    return 0


def print_summary(console: Console, outcome: Outcome, context: Context) -> None:
    values = outcome.values
    """The closing summary; every line is plain text (a path or a count may hold `[`)."""
    from rich.text import Text

    records = read_log(HOME.log_path(outcome.thread_id)).records
    if outcome.report is None:
        console.print(plain(f"Thread {outcome.thread_id} was already done; nothing left to run."))
    else:
        console.print(Text.assemble("\n", ("Report saved:", "bold"), " ", plain(outcome.report)))
    minutes, seconds = divmod(int(outcome.seconds), 60)
    lines = [f"wall time     {minutes}:{seconds:02d} (this session)", *totals(records).lines()]
    cap = context.max_searches_per_run
    used = values.get("searches_used", 0)
    lines.append(f"search budget {used} of {cap} used")
    lines.append(f"sources       {len(values.get('sources', []))}")
    lines.append(citation_line(values))
    lines.append(f"traffic log   {HOME.log_path(outcome.thread_id)}")
    for line in lines:
        console.print(plain(line))


async def _statuses(thread_ids: list[str]) -> list[str]:
    from deep_research.cli.runs import durable_graph, status_of

    async with durable_graph(HOME) as graph:
        return [await status_of(graph, thread_id) for thread_id in thread_ids]


def runs_table(rows: list[tuple[str, str, str, str, str]]) -> list[str]:
    """`runs` output: a header, then one line per run (thread, started, status, question,
    report or error), each cell cut to one line so a long error cannot spill."""
    lines = []
    for thread, when, status, question, detail in [RUNS_HEADER, *rows]:
        question = first_line(question, QUESTION_CHARS)
        line = f"{thread:<8}  {when:<16}  {status:<22}  {question:<{QUESTION_CHARS}}"
        lines.append(f"{line}  {first_line(detail, DETAIL_CHARS)}".rstrip())
    return lines


def show_runs(argv: list[str], console: Console) -> int:
    import asyncio

    if argv:
        raise UsageError(f"`runs` takes no arguments, got {' '.join(argv)!r}")
    runs = list_runs(HOME)
    if not runs:
        console.print(plain(f"No runs yet in {HOME.root}/."))
        return 0
    for run in runs:
        _warn(run)
    statuses = asyncio.run(_statuses([run.thread_id for run in runs]))
    rows = [
        (
            run.thread_id,
            datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M"),
            status,
            run.question,
            (run.report if status == "done" else run.error) or "",
        )
        for run, status in zip(runs, statuses, strict=True)
    ]
    for line in runs_table(rows):
        console.print(plain(line))
    return 0


def replay(argv: list[str], console: Console) -> int:
    from deep_research.cli.replay import timeline

    if len(argv) != 1:
        raise UsageError("usage: deep-research replay FILE (a .deep_research/runs/*.jsonl log)")
    path = Path(argv[0])
    if not path.is_file():
        raise UsageError(f"no traffic log at {path}")
    log = read_log(path)
    if warning := log.warning():
        print(f"deep-research: {without_controls(warning)}", file=sys.stderr)
    for line in timeline(log.records):
        console.print(plain(line))
    return 0


def doctor(argv: list[str], console: Console) -> int:
    from deep_research.cli.doctor import doctor as run_doctor  # its probes load only for it

    return run_doctor(argv, console)


def memory(argv: list[str], console: Console) -> int:
    from deep_research.cli.memory import MemoryUsageError, memory_command  # chromadb: on open

    try:
        return memory_command(argv, console)
    except MemoryUsageError as error:
        raise UsageError(str(error)) from None


def library(argv: list[str], console: Console) -> int:
    from deep_research.cli.library import LibraryUsageError
    from deep_research.cli.library import library as run_library  # Chroma loads only for it

    try:
        return run_library(argv, console)
    except LibraryUsageError as error:
        raise UsageError(f"{error} (see deep-research --help)") from None


def run_failures() -> tuple[type[Exception], ...]:
    """Errors that end a run with their own one-line message (exit 1); imported only when
    one is being handled, so `--help` stays light."""
    import openai
    from langchain_core.exceptions import ModelError  # other providers' API errors

    from deep_research.cli.runs import UnknownRunError
    from deep_research.cli.session import ResumeError
    from deep_research.llm.models import EmptyReplyError, ModelEndpointError
    from deep_research.memory import MemoryUnavailable
    from deep_research.researcher.task import OldCheckpointError

    return (
        ModelEndpointError,
        EmptyReplyError,
        openai.APIError,
        ModelError,
        UnknownRunError,
        ResumeError,
        OldCheckpointError,
        MemoryUnavailable,
    )


def main(argv: list[str] | None = None) -> int:
    envfile.load_once()  # `.env` below the process environment, before anything reads either
    argv = sys.argv[1:] if argv is None else argv
    console = terminal_console()
    commands = {
        "runs": show_runs,
        "replay": replay,
        "doctor": doctor,
        "memory": memory,
        "library": library,
    }
    try:
        if argv and argv[0] in commands:
            return commands[argv[0]](argv[1:], console)
        return ask(argv, console)
    except (UsageError, ConfigError, BadThreadIdError) as error:
        print(f"deep-research: {without_controls(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before a run started (a run's Ctrl-C ends in `ask`)
        print("deep-research: stopped", file=sys.stderr)
        return 130
    except Exception as error:
        from deep_research.text.secrets import redact

        # A server may echo the key it was sent in its error text: scrub it like the log.
        text = without_controls(redact(str(error)))
        if isinstance(error, run_failures()):
            print(f"deep-research: {text}", file=sys.stderr)
            return 1
        # Last resort: one line, never a traceback. Only a run has a thread to resume.
        hint = "" if argv and argv[0] in commands else RESUME_HINT
        print(f"deep-research: {type(error).__name__}: {text}{hint}", file=sys.stderr)
        return 1
