"""Which thread a research command runs: a new one for the question, the stopped one
`--resume` names, or the finished one `--follow-up` asks again, each with its settings."""

from __future__ import annotations

import argparse
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deep_research.cli.args import HOME, UsageError, readable, settings_from
from deep_research.cli.plain import plain
from deep_research.cli.runs import RunRecord, load_run, warn_skipped

if TYPE_CHECKING:
    from rich.console import Console


@dataclass(frozen=True)
class ThreadToRun:
    """The thread to run, new or stopped, with its settings and where its report goes."""

    thread_id: str
    question: str
    settings: dict[str, Any]  # flags over, on `--resume`, the ones the thread started with
    out: str | None
    export: str | None
    resume: bool
    follow_up: bool = False  # a new question on a finished thread (`--follow-up`)


def chosen_thread(args: argparse.Namespace, console: Console) -> ThreadToRun:
    """A new thread for the question, or the stopped one `--resume` names."""
    settings = settings_from(args)
    if args.resume is not None and (args.question or args.follow_up):
        raise UsageError("give a question or --resume THREAD_ID, not both")
    if args.resume is not None:
        return _resumed(args, settings, console)
    if not (args.question and args.question.strip()):
        if args.follow_up is not None:
            raise UsageError(
                f"give the follow-up question, e.g. deep-research --follow-up {args.follow_up} "
                '"What about older houses?"'
            )
        raise UsageError('give a question, e.g. deep-research "Are heat pumps worth it?"')
    question = readable(args.question).strip()
    if args.follow_up is not None:
        return followed(args.follow_up, settings, question, (args.out, args.export), console)
    HOME.runs().check()  # a bad DEEP_RESEARCH_CHECKPOINTS stops here, before the run
    return ThreadToRun(uuid.uuid4().hex[:8], question, settings, args.out, args.export, False)


def _resumed(args: argparse.Namespace, settings: dict[str, Any], console: Console) -> ThreadToRun:
    """The stopped thread `--resume` names, with its settings under the flags given now."""
    record = load_run(HOME, args.resume)  # a bad DEEP_RESEARCH_CHECKPOINTS stops here
    warn_skipped(record)
    for line in logs_elsewhere(record):
        console.print(plain(line))
    out, export = args.out, args.export
    if record.report is None:  # not saved yet: where and as what the user asked, still
        out, export = out or record.out, export or record.export
    settings = {**record.settings, **settings}
    return ThreadToRun(record.thread_id, record.latest_question, settings, out, export, True)


def followed(
    thread_id: str,
    settings: dict[str, Any],
    question: str,
    out_export: tuple[str | None, str | None],
    console: Console,
) -> ThreadToRun:
    """The finished thread `thread_id`, asked `question` with its settings (its caps and
    budget too) under the flags given now. Its report is a new file: the first stays."""
    record = load_run(HOME, thread_id)  # an unknown thread stops here (exit 2)
    warn_skipped(record)
    for line in logs_elsewhere(record):
        console.print(plain(line))
    from deep_research.config.names import ConfigError
    from deep_research.config.settings import follow_up_settings

    try:  # never above the thread's search cap, nor off its library-only search
        settings = follow_up_settings(record.settings, settings)
    except ConfigError as refused:
        raise UsageError(f"--follow-up {record.thread_id}: {refused}") from None
    out, export = out_export
    return ThreadToRun(record.thread_id, question, settings, out, export, False, follow_up=True)


def logs_elsewhere(record: RunRecord) -> list[str]:
    """Where earlier sessions' traffic logs are when they are not this directory's (a
    shared run list): they stay where they were written, and so does `replay`."""
    import socket

    here = f"{socket.gethostname()}:{HOME.log_path(record.thread_id).absolute()}"
    others = list(dict.fromkeys(log for log in record.logs if log != here))
    if not others:
        return []
    lines = [f"Earlier traffic logs of {record.thread_id} stay where they were written:"]
    lines += [f"  {log}" for log in others]
    lines.append(
        f"  (deep-research replay {record.thread_id} in that directory shows them; this "
        f"session logs to {HOME.log_path(record.thread_id)})"
    )
    return lines
