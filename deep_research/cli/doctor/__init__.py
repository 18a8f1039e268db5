"""`deep-research doctor`: before a first run, whether a run can succeed and what to change.

    deep-research doctor [--model SPEC] [--search NAME] [--query TEXT] [--set FIELD=VALUE]
                         [--timeout S] [--json] [--fetch]

It reads the configuration a run with the same flags would use, probes every model
endpoint, search provider and local prerequisite at once (each under its own deadline),
and prints one line per check. Exit code 0: a run can succeed (warnings allowed); 1: a
check failed; 2: the configuration itself is invalid.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from langsmith import tracing_context
from rich.console import Console
from rich.text import Text

from deep_research.checkpoints.target import DEFAULT_SQLITE, Target, target_from
from deep_research.cli.args import HOME, REPORTS_DIR, Parser, settings_from
from deep_research.cli.doctor import relevance
from deep_research.cli.doctor.checks import PROBE_QUERY, Check, check_searches
from deep_research.cli.doctor.local import (
    check_checkpoints,
    check_memory,
    check_settings,
    check_tracing,
    check_writable,
)
from deep_research.cli.doctor.mcp_servers import check_mcp_servers
from deep_research.cli.doctor.model_checks import check_model, model_targets
from deep_research.cli.doctor.rendering import check_rendering
from deep_research.config.names import SEARCH_CHOICES
from deep_research.config.settings import Context, load_context

DEFAULT_TIMEOUT = 10.0
MAX_QUERY_CHARS = 400  # Tavily refuses longer queries; a probe needs no more
# A model's reply is not a network round trip: a small model on a laptop CPU takes ~10 s
# for a run's first call, so its probe waits this long unless --timeout says otherwise.
REPLY_DEADLINE = 60.0
# Loading MiniLM maps ~90 MB of weights (seconds from a cold, busy disk): not a network deadline.
RELEVANCE_DEADLINE = 60.0
# Starting Chromium with a fresh profile takes a second or two, more on a busy machine.
BROWSER_DEADLINE = 30.0
STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}


def doctor_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="deep-research doctor",
        description="Check that a run can succeed: model endpoints, search, relevance model, "
        "directories, where runs and memory are, tracing. Takes the run's setting flags, so it "
        "checks what you will run.",
    )
    parser.add_argument("--model", help="model for every role, as provider:model")
    parser.add_argument(
        "--search",
        metavar="PROVIDER",
        help=f"search provider: {', '.join(SEARCH_CHOICES[:-1])} or {SEARCH_CHOICES[-1]}",
    )
    parser.add_argument(
        "--query",
        type=_query,
        default=PROBE_QUERY,
        help="what each search provider is asked, one search each (your own topic, in your "
        f"language, say; default {PROBE_QUERY!r})",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any other setting, as for a run (repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help=f"deadline of each probe (default {DEFAULT_TIMEOUT:g}, and {REPLY_DEADLINE:g} "
        "for a model's reply)",
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument(
        "--fetch",
        action="store_true",
        help="download the relevance model's files first (about 91 MB, once), or fetch "
        "damaged ones again",
    )
    # `settings_from` reads the research command's flags; doctor has no use for these.
    parser.set_defaults(
        no_clarify=False,
        review_plan=False,
        max_searches=None,
        max_cost=None,
        language=None,
        length=None,
    )
    return parser


def _query(text: str) -> str:
    query = " ".join(text.split())
    if not query or len(query) > MAX_QUERY_CHARS:
        raise argparse.ArgumentTypeError(
            f"--query wants 1 to {MAX_QUERY_CHARS} characters, got {len(query)}"
        )
    return query


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"--timeout wants 0 < SECONDS <= 600, got {text}")
    return value


async def run_checks(
    context: Context,
    timeout: float,
    home: Path = HOME.root,
    reports: Path = REPORTS_DIR,
    checkpoints: Target | None = None,
    reply_timeout: float | None = None,
    query: str = PROBE_QUERY,
) -> list[Check]:
    """Every check, run at once, in reading order: models, search, this machine;
    `reply_timeout`: a model reply's deadline, when not `timeout`; `query`: what each search
    provider is asked."""
    targets = model_targets(context)
    where = checkpoints or Target(sqlite=home / DEFAULT_SQLITE.name)
    async with asyncio.TaskGroup() as group:
        stored = group.create_task(asyncio.to_thread(check_checkpoints, where, timeout))
        models = [
            group.create_task(check_model(context, t, timeout, reply_timeout)) for t in targets
        ]
        searches = group.create_task(check_searches(context, timeout, query))
        servers = group.create_task(check_mcp_servers(timeout))
        model = group.create_task(
            relevance.check_relevance(context, max(timeout, RELEVANCE_DEADLINE))
        )
        rendering = group.create_task(check_rendering(max(timeout, BROWSER_DEADLINE)))
    return [
        check_settings(),
        *(check for task in models for check in task.result()),
        *searches.result(),
        *servers.result(),
        model.result(),
        check_writable(home, "checkpoint dir"),
        stored.result(),
        check_writable(reports, "report dir"),
        check_memory(context.use_memory),
        check_tracing(),
        rendering.result(),
    ]


def doctor(argv: list[str], console: Console) -> int:
    """The `doctor` command: 0 when a run can succeed, 1 when a check failed."""
    args = doctor_parser().parse_args(argv)
    context = load_context(settings_from(args))  # ConfigError: one line, exit 2 (main)
    checkpoints = target_from(sqlite=HOME.checkpoints)  # so is a bad DEEP_RESEARCH_CHECKPOINTS
    if args.fetch:
        relevance.fetch()  # a failure is its line here and the check's below
    # The probe's model call must not become a LangSmith trace (nor wait on one offline).
    with tracing_context(enabled=False):
        checks = asyncio.run(
            run_checks(
                context,
                args.timeout or DEFAULT_TIMEOUT,
                checkpoints=checkpoints,
                reply_timeout=args.timeout or REPLY_DEADLINE,
                query=args.query,
            )
        )
    failed = [check for check in checks if check.status == "fail"]
    if args.json:
        print(json.dumps({"ready": not failed, "checks": [vars(c) for c in checks]}, indent=2))
    else:
        for check in checks:
            console.print(line(check), highlight=False)
        console.print(summary(checks), highlight=False)
    return 1 if failed else 0


def line(check: Check) -> Text:
    """`ok    name: detail`, and `  → fix` after anything that is not ok."""
    text = Text.assemble((f"{check.status:<5}", STYLES[check.status]), f" {check.name}: ")
    text.append(check.detail)
    if check.fix and check.status != "ok":
        text.append(f"  → {check.fix}")
    return text


def summary(checks: list[Check]) -> str:
    failed = sum(check.status == "fail" for check in checks)
    warned = sum(check.status == "warn" for check in checks)
    warnings = f"{warned} warning{'s' if warned != 1 else ''}"
    if failed:
        plural = "s" if failed != 1 else ""
        return f"Not ready: {failed} check{plural} failed, {warnings}. Fix, then re-run doctor."
    return f"Ready: a run can succeed ({warnings})."
