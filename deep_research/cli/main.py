"""`deep-research`: ask a question, resume a run, list runs, or replay a traffic log.

    deep-research "question" [--no-clarify] [--review-plan] [--model SPEC] [--search NAME]
                             [--max-searches N] [--out PATH] [--export html,pdf,docx]
    deep-research --resume THREAD_ID
    deep-research --follow-up THREAD_ID "question"
    deep-research runs
    deep-research replay THREAD_ID | FILE
    deep-research export REPORT.md --to html|pdf|docx [--out PATH]
    deep-research doctor [--model SPEC] [--search NAME] [--set FIELD=VALUE] [--json]
    deep-research memory list | search QUERY | forget THREAD_ID | clear --yes | stop
    deep-research library add PATH… | library list | library remove PATH

This module sends each command to its module and holds the one error policy: errors are
one line on stderr, never a traceback; exit code 2 for bad input, 1 for a failed run, 130
for Ctrl-C, and 3 for a run whose report was saved but cites no retrieved page
(`research.UNSOURCED_EXIT`).
"""

from __future__ import annotations

# Only light imports up here: `--help` and usage errors answer in about a tenth of a
# second. Each command imports what it needs (the graph, pydantic, openai, LangChain, Chroma).
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from deep_research.cli.args import HOME, UsageError
from deep_research.cli.plain import plain, terminal_console
from deep_research.cli.research import ask
from deep_research.cli.runs import THREAD_ID, BadThreadIdError, UnknownRunError, read_log
from deep_research.cli.runs_table import show_runs
from deep_research.config import envfile
from deep_research.config.names import ConfigError
from deep_research.errors import ReadableError
from deep_research.text.controls import without_controls

if TYPE_CHECKING:
    from rich.console import Console

RESUME_HINT = " (the run is checkpointed: resume it with the thread id shown above)"


def replay(argv: list[str], console: Console) -> int:
    from deep_research.cli.replay import timeline

    if len(argv) != 1:
        raise UsageError(
            "usage: deep-research replay THREAD_ID | FILE (a thread `runs` lists, or a "
            ".deep_research/runs/*.jsonl log)"
        )
    path = Path(argv[0])
    if not path.is_file() and THREAD_ID.fullmatch(argv[0]):  # the id `runs` shows
        path = HOME.log_path(argv[0])
    if not path.is_file():
        raise UsageError(
            f"no traffic log at {path} and no run {argv[0]!r} in this directory "
            f"({_logs_elsewhere(argv[0]) or 'deep-research runs lists them'})"
        )
    log = read_log(path)
    if warning := log.warning():
        print(f"deep-research: {without_controls(warning)}", file=sys.stderr)
    for line in timeline(log.records):
        console.print(plain(line))
    return 0


def _logs_elsewhere(thread_id: str) -> str | None:
    """With a shared run list, where a thread's traffic logs are: they stay where written."""
    if not THREAD_ID.fullmatch(thread_id) or not HOME.target().shared:
        return None
    from deep_research.cli.runs import load_run

    try:
        logs = load_run(HOME, thread_id).logs
    except UnknownRunError:
        return None
    if not logs:
        return None
    return f"its traffic logs stay where they were written: {', '.join(dict.fromkeys(logs))}"


def doctor(argv: list[str], console: Console) -> int:
    from deep_research.cli.doctor import doctor as run_doctor  # its probes load only for it

    return run_doctor(argv, console)


def memory(argv: list[str], console: Console) -> int:
    from deep_research.cli.memory import memory_command  # chromadb: on open

    return memory_command(argv, console)


def library(argv: list[str], console: Console) -> int:
    from deep_research.cli.library import library as run_library  # Chroma loads only for it

    return run_library(argv, console)


def export(argv: list[str], console: Console) -> int:
    from deep_research.cli.export import export_command  # WeasyPrint, pandoc: only for it

    return export_command(argv, console)


COMMANDS: dict[str, Callable[[list[str], Console], int]] = {
    "runs": show_runs,
    "replay": replay,
    "doctor": doctor,
    "memory": memory,
    "library": library,
    "export": export,
}


def said_why(error: Exception) -> bool:
    """Whether `error`'s message alone tells the user what failed: a `ReadableError` does,
    and so do the model APIs' own. Imported only when one is being handled, so `--help`
    stays light."""
    import openai
    from langchain_core.exceptions import ModelError  # other providers' API errors

    return isinstance(error, ReadableError | openai.APIError | ModelError)


def main(argv: list[str] | None = None) -> int:
    envfile.load_once()  # `.env` below the process environment, before anything reads either
    argv = sys.argv[1:] if argv is None else argv
    console = terminal_console()
    command = COMMANDS.get(argv[0]) if argv else None
    try:
        return command(argv[1:], console) if command else ask(argv, console)
    # Bad input, exit 2: an unknown thread id (`--resume deadbeef`) is one too.
    except (UsageError, ConfigError, BadThreadIdError, UnknownRunError) as error:
        print(f"deep-research: {without_controls(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before a run started (a run's Ctrl-C ends in `ask`)
        print("deep-research: stopped", file=sys.stderr)
        return 130
    except Exception as error:
        from deep_research.text.secrets import redact

        # A server may echo the key it was sent in its error text: scrub it like the log.
        text = without_controls(redact(str(error)))
        if said_why(error):
            print(f"deep-research: {text}", file=sys.stderr)
            return 1
        # Last resort: one line, never a traceback. Only a run has a thread to resume.
        hint = "" if command else RESUME_HINT
        print(f"deep-research: {type(error).__name__}: {text}{hint}", file=sys.stderr)
        return 1
