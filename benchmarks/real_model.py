"""`python -m benchmarks.real_model`: one run against a real model, and where its time went.

The real `deep-research` CLI (`--no-clarify --max-searches 6`) against llama-cpp-python's
server serving SmolLM2-135M-Instruct with 8k of context, one request at a time (a laptop's
single slot), the fake search API and local pages (`tests/support/real_run.py`). Needs
`.venv-llama` (`.ci/llama` builds it). Reports the wall time, the model calls per role,
their tokens, and for each call what the server spent reading the prompt and generating
(llama.cpp's own timings from the server's log, paired with the traffic log's calls in
order: one slot serves them one by one), and the largest prompt against the context.

    python -m benchmarks.real_model            # Markdown
    python -m benchmarks.real_model --json
    python -m benchmarks.real_model --length brief   # and --length detailed

With `--length`, the run asks for that report length and keeps the completion limits a user
gets (no `LLM_MAX_TOKENS` of the test's), and the result counts the report's words.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from deep_research.config.report_lengths import REPORT_LENGTHS
from tests.support.cli import QUESTION
from tests.support.llama_server import server_timings


def summarise(records: list[dict[str, Any]], log: str) -> dict[str, Any]:
    """The traffic log's calls, each with the server's timings for it, added up per role."""
    replies = [r for r in records if r.get("kind") == "model_reply"]
    timings = server_timings(log)
    roles: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    calls = []
    for reply, timing in zip(replies, timings, strict=False):
        role = str(reply.get("role", "model"))
        call = {
            "role": role,
            "tokens_in": int(reply.get("tokens_in") or 0),
            "tokens_out": int(reply.get("tokens_out") or 0),
            "seconds": float(reply.get("seconds") or 0),
            **timing,
        }
        calls.append(call)
        totals = roles[role]
        totals["calls"] += 1
        for key in ("tokens_in", "read_tokens", "tokens_out", "prompt_s", "generate_s", "seconds"):
            totals[key] += call[key]
    return {
        "calls": calls,
        "roles": {role: dict(values) for role, values in roles.items()},
        "replies": len(replies),
        "server_completions": len(timings),  # more than replies: a call the client gave up on
        "largest_prompt": max((c["tokens_in"] for c in calls), default=0),
    }


def report_words(cwd: Path) -> int | None:
    """Words of the run's saved report above its Sources list (None: no report saved)."""
    reports = sorted((cwd / "reports").glob("*.md"))
    if not reports:
        return None
    body = reports[0].read_text(errors="replace").split("\n## Sources", 1)[0]
    return len(body.split())


def measure(length: str | None = None) -> dict[str, Any]:
    from tests.support.llama_server import CONTEXT, llama_server
    from tests.support.real_run import run_real

    extra = ("--length", length) if length else ()
    env: dict[str, str | None] = {"LLM_MAX_TOKENS": None} if length else {}
    cwd = Path(tempfile.mkdtemp(prefix="bench-real-"))
    with llama_server() as server:
        run = run_real(cwd, server, QUESTION, *extra, env=env)
        log = server.log.read_text(errors="replace")
        started = server.started_in
    searches = len(run.queries)
    fetched = sum(1 for r in run.records if r.get("event") == "fetch" and r.get("chars"))
    return {
        "model": "SmolLM2-135M-Instruct Q4_1 (llama-cpp-python 0.3.36, its GGUF's template)",
        "n_ctx": CONTEXT,
        "server_start_s": round(started, 1),
        "wall_s": round(run.seconds, 1),
        "exit": run.result.returncode,
        "searches": searches,
        "pages_read": fetched,
        "length": length or "standard (LLM_MAX_TOKENS=1024)",
        "report_words": report_words(cwd),
        **summarise(run.records, log),
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| role | calls | prompt tok | read tok | completion tok | prompt s | generation s "
        "| call s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for role, r in sorted(result["roles"].items()):
        lines.append(
            f"| {role} | {r['calls']:.0f} | {r['tokens_in']:,.0f} | {r['read_tokens']:,.0f} "
            f"| {r['tokens_out']:,.0f} | {r['prompt_s']:.1f} | {r['generate_s']:.1f} "
            f"| {r['seconds']:.1f} |"
        )
    share = result["largest_prompt"] / result["n_ctx"]
    lines += [
        "",
        f"{result['model']}: server ready in {result['server_start_s']} s; the run took "
        f"{result['wall_s']} s, exit {result['exit']}, {result['searches']} searches, "
        f"{result['pages_read']} pages read; {result['replies']} calls logged, "
        f"{result['server_completions']} completions served; largest prompt "
        f"{result['largest_prompt']:,} tokens of {result['n_ctx']:,} ({share:.0%}). Report: "
        f"{result['report_words']} words, asked for {result['length']}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.real_model", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="JSON instead of Markdown")
    parser.add_argument(
        "--length", choices=REPORT_LENGTHS, help="the report length asked for (--length)"
    )
    args = parser.parse_args(argv)
    result = measure(args.length)
    print(json.dumps(result, indent=2) if args.json else markdown(result))


if __name__ == "__main__":
    main()
