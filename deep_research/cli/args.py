"""The command line: the research parser, its one-line errors, and flags as `Context` overrides.

Every setting flag is a `Context` field (`--set FIELD=VALUE` reaches any of them), so the
CLI validates and explains bad values exactly as Studio and the SDK do. `deep-research
doctor` takes the same setting flags through `settings_from`.
"""

from __future__ import annotations

# Only light imports here: `--help` and usage errors answer in about a tenth of a second.
import argparse
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from deep_research.cli.runs import BadThreadIdError, Home, check_thread_id
from deep_research.config.names import (
    DEFAULT_LLM_MODEL,
    MODEL_PROVIDERS,
    SEARCH_CHOICES,
    SETTING_NAMES,
)
from deep_research.config.report_lengths import REPORT_LENGTHS
from deep_research.errors import DeepResearchError

HOME = Home(Path(".deep_research"))
# Where reports are written (not memory's `REPORTS` collection of remembered reports).
REPORTS_DIR = Path("reports")


class UsageError(DeepResearchError, ValueError):
    """The command line is wrong; the message says how."""


@dataclass(frozen=True)
class ReportTarget:
    """Where a run saves its report: in `folder`, under `name` or the usual dated one."""

    folder: Path = REPORTS_DIR
    name: str | None = None


def report_target(out: str | None) -> ReportTarget:
    """`--out PATH`, checked before the run: a PATH ending in `/` or naming a directory is
    that directory (usual name); any other is the file, which must not exist yet (a report
    of minutes never replaces a file silently). A missing parent is created when saving."""
    if out is None:
        return ReportTarget()
    path = Path(out)
    if out.endswith(("/", os.sep)) or path.is_dir():
        target = ReportTarget(path)
    elif path.exists() or path.is_symlink():
        raise UsageError(f"--out: {out} already exists; choose another name or remove it")
    else:
        target = ReportTarget(path.parent, path.name)
    # The nearest existing ancestor must be a directory, or saving fails after the run.
    for parent in (target.folder, *target.folder.parents):
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"--out: {parent} is a file, not a directory")
            break
    return target


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one `UsageError` line, not usage + message."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see deep-research --help)")


def _epilog() -> str:
    settings = textwrap.fill(", ".join(SETTING_NAMES), width=78, subsequent_indent="  ")
    providers = textwrap.fill(", ".join(MODEL_PROVIDERS), width=78, subsequent_indent="  ")
    return (
        "search providers (--search, --set search_fallback=A,B):\n"
        f"  {', '.join(SEARCH_CHOICES)}. auto: tavily when TAVILY_API_KEY is set, else\n"
        "  searxng when SEARXNG_URL is set, else ddgs (keyless). arxiv, openalex,\n"
        "  europepmc: papers' abstracts; wikipedia: articles (keyless). library: only the\n"
        "  documents added with deep-research library add, never the web.\n"
        "model providers (--model, --set ROLE_model=provider:model):\n"
        "  local: the OpenAI-compatible server at LLM_BASE_URL; openai: OpenAI's cloud,\n"
        "  needs OPENAI_API_KEY; any other langchain provider with its extra installed, e.g.\n"
        "  anthropic, ollama, google_genai, groq, mistralai, bedrock (pip install -e\n"
        '  ".[anthropic]"; docs/configuration.md). All:\n'
        f"  {providers}\n"
        f"  e.g. --model local:{DEFAULT_LLM_MODEL}\n"
        "settings (--set FIELD=VALUE; each also read from its upper-cased environment\n"
        f"variable):\n  {settings}\n"
        "other commands:\n"
        "  deep-research doctor        check that a run can succeed, and what to change\n"
        "  deep-research runs          list past runs in this directory\n"
        "  deep-research replay THREAD_ID | FILE\n"
        "                              print a run's traffic log as a timeline\n"
        "  deep-research export REPORT.md --to html|pdf|docx [--out PATH]\n"
        "                              a saved report as a file to share, links kept\n"
        "  deep-research memory list | search QUERY | forget THREAD_ID | clear --yes | stop\n"
        "                              past research remembered (MEMORY_DIR or CHROMA_HOST)\n"
        "  deep-research library add PATH… | list | remove PATH\n"
        "                              your documents as a source, beside the web\n"
        "Ctrl-C stops a run at once; resume it with --resume THREAD_ID.\n"
        'Ask more about a finished run: deep-research --follow-up THREAD_ID "question".'
    )


def research_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="deep-research",
        description="Research a question on the web and write a cited Markdown report.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("question", nargs="?", help="what to research")
    parser.add_argument(
        "--resume", metavar="THREAD_ID", type=_thread_id, help="continue a stopped run"
    )
    parser.add_argument(
        "--follow-up",
        metavar="THREAD_ID",
        type=_thread_id,
        help="ask the question about a finished run: it starts from what that run read",
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
        "--max-cost",
        type=float,
        metavar="USD",
        help="most the run's model calls may cost, in USD (see docs/cost.md)",
    )
    parser.add_argument(
        "--language",
        metavar="LANG",
        help="the report's language, a code or name, e.g. de, zh, German (default: the question's)",
    )
    parser.add_argument(
        "--length",
        choices=REPORT_LENGTHS,
        help="the report's length unless the question asks for one (default: standard)",
    )
    parser.add_argument(
        "--out",
        metavar="PATH",
        help="write the report to PATH (a new file), or into PATH/ under the usual name "
        "(default: reports/)",
    )
    parser.add_argument(
        "--export",
        metavar="FORMATS",
        help="also write the report as html, pdf and/or docx, beside it (e.g. html,pdf)",
    )
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
    if args.max_cost is not None:
        settings["max_cost_usd"] = args.max_cost
    if args.language is not None:
        settings["report_language"] = args.language
    if args.length is not None:
        settings["report_length"] = args.length
    return settings


def readable(argument: str) -> str:
    """A command-line argument as text: bytes that are not UTF-8 (which Python keeps as lone
    surrogates) become U+FFFD, so the question can be logged, checkpointed and sent."""
    return argument.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
