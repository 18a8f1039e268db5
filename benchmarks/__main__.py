"""`python -m benchmarks`: how fast a run is, and where its time and tokens go.

Runs the real graph against the scripted model server, the fake search API and local
pages (see `world.py`), each case in a fresh process, for the *cloud* profile (0.5 s to
the first token, 30 tokens/s, requests in parallel) and the *laptop* profile (one request
at a time, 250 prompt tokens/s, 25 tokens/s out), with K research topics. Prints a
Markdown table, or JSON with `--json`. Ratios, not seconds, are what a test may check.

    python -m benchmarks                       # both profiles, K = 1, 3, 6
    python -m benchmarks --profile cloud --k 3
    python -m benchmarks --quick --json        # cloud, K = 1, one start-up sample
    python -m benchmarks --busy 2              # the cores kept busy, as a model server does
    python -m benchmarks --sections both       # each case with report_in_sections off, then auto
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from benchmarks import analysis, startup
from benchmarks.embedding import busy
from benchmarks.world import PROFILES


def run_case(profile: str, k: int, sections: str = "auto") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.case", profile, str(k), sections],
        check=True,
        capture_output=True,
        text=True,
    )
    case = json.loads(done.stdout.strip().splitlines()[-1])
    chosen = PROFILES[profile]
    return {**analysis.summarise(case, chosen.parallel, chosen.time_scale), "sections": sections}


def measure(
    profiles: list[str],
    ks: list[int],
    startup_runs: int,
    load: int = 0,
    sections: tuple[str, ...] = ("auto",),
) -> dict[str, Any]:
    with busy(load):  # the cores kept busy while each case runs, as a local model server does
        cases = [run_case(p, k, s) for p in profiles for k in ks for s in sections]
    return {
        "cases": cases,
        "busy": load,
        "startup": {**startup.measure(startup_runs), "runs": startup_runs},
    }


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| profile | K | model calls | prompt tok | read tok | completion tok | searches "
        "| fetches | start s | report s | wall s | model path s | ratio | longest gap s "
        "| parallel eff. | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in results["cases"]:
        lines.append(
            f"| {_name(c)} | {c['k']} | {c['model_calls']} | {c['prompt_tokens']:,} "
            f"| {c['processed_tokens']:,} | {c['completion_tokens']:,} | {c['searches']} "
            f"| {c['page_fetches']} | {c['process_start_s']:.1f} | {c['report_s']:.1f} "
            f"| {c['wall_s']:.1f} | {c['model_critical_path_s']:.1f} | {c['ratio']:.3f} "
            f"| {c['longest_gap_s']:.2f} | {c['parallel_efficiency']:.2f} | {c['peak_rss_mb']} |"
        )
    lines += [
        "",
        "| profile | K | role | calls | prompt tok | read tok | completion tok | system chars "
        "| prompt chars | tools chars |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in results["cases"]:
        for role, r in sorted(c["roles"].items()):
            lines.append(
                f"| {_name(c)} | {c['k']} | {role} | {r['calls']} | {r['prompt_tokens']:,} "
                f"| {r['processed_tokens']:,} | {r['completion_tokens']:,} "
                f"| {r['system_chars']:,} | {r['prompt_chars']:,} | {r['tool_chars']:,} |"
            )
    lines += sections_compared(results["cases"])
    gaps = [(c, g) for c in results["cases"] for g in c["idle_gaps"]]
    if gaps:
        lines += ["", "Idle gaps on the critical path (over 0.05 s):", ""]
        lines += [
            f"- {c['profile']} K={c['k']}: {g['seconds']:.2f} s at {g['at']:.1f} s, "
            f"{g['after']} → {g['before']}: {g['cause']}"
            for c, g in gaps
        ]
    timed = [c for c in results["cases"] if "checkpoints" in c]  # cases measured since #37
    if timed:
        lines += ["", 'Checkpoint writes (SQLite, durability "sync", as the CLI runs):', ""]
    for c in timed:
        w = c["checkpoints"]
        lines.append(
            f"- {c['profile']} K={c['k']}: {w['steps']} steps, {w['task_writes']} task writes, "
            f"{w['seconds']:.2f} s in all ({w['ms_per_step'] or 0:.1f} ms a step, "
            f"{w['share_of_wall'] or 0:.1%} of the wall time)"
        )
    if results.get("busy"):
        lines += ["", f"Each case ran beside {results['busy']} busy processes (`--busy`)."]
    s = results["startup"]
    scaled = sorted({c["profile"] for c in results["cases"] if c["time_scale"] != 1})
    lines += [
        "",
        f"Start-up (median of {s['runs']}): "
        f"`import deep_research.graph` {s['import_graph_s']:.2f} s, "
        f"`deep-research --help` {s['help_s']:.2f} s ({s['help_over_import']:.2f}x).",
    ]
    if "memory_list_s" in s:  # `benchmarks.startup`'s small commands
        lines.append(
            f"Small commands: `memory list` {s['memory_list_s']:.2f} s "
            f"({s['memory_list_over_import']:.2f}x), `library list` {s['library_list_s']:.2f} s "
            f"({s['library_list_over_import']:.2f}x), `library add` of three files "
            f"{s['library_add_s']:.2f} s ({s['library_add_over_import']:.2f}x)."
        )
    if scaled:
        factors = ", ".join(f"{p} {1 / PROFILES[p].time_scale:g}x" for p in scaled)
        lines.append(f"Model time runs compressed ({factors}): its ratios are pessimistic.")
    lines.append(
        "prompt tok: sent; read tok: what the server read after its prefix cache (laptop: "
        "one cached prompt, as mlx_lm.server keeps; cloud: none modelled); prompt chars: the "
        "requests' characters (system text, tools' JSON, messages' JSON); tools chars: the "
        "tools' JSON alone."
    )
    return "\n".join(lines)


def _name(case: dict[str, Any]) -> str:
    """The profile, and how the report was written when not as by default (`auto`)."""
    how = {"off": ", one call", "on": ", sections"}.get(case.get("sections", "auto"), "")
    return f"{case['profile']}{how}"


REPORT_ROLES = ("report_section", "report_frame")


def sections_compared(cases: list[dict[str, Any]]) -> list[str]:
    """For each profile and K run both ways: what writing the report in sections did. The
    single report call's prompt is the orchestrator's tokens off minus on (the calls before
    it are the same); the sections' is every section and frame call's."""
    found = {(c["profile"], c["k"], c.get("sections", "off")): c for c in cases}
    lines: list[str] = []
    for (profile, k, sections), on in found.items():
        off = found.get((profile, k, "off"))
        if sections == "off" or off is None:
            continue
        single = _role(off, "orchestrator", "prompt_tokens") - _role(
            on, "orchestrator", "prompt_tokens"
        )
        split = sum(_role(on, role, "prompt_tokens") for role in REPORT_ROLES)
        read = sum(_role(on, role, "processed_tokens") for role in REPORT_ROLES)
        single_read = _role(off, "orchestrator", "processed_tokens") - _role(
            on, "orchestrator", "processed_tokens"
        )
        lines.append(
            f"- {profile} K={k}, sections {sections} vs off: wall {off['wall_s']:.1f} → "
            f"{on['wall_s']:.1f} s ({on['wall_s'] / off['wall_s']:.2f}x), report at "
            f"{off['report_s']:.1f} → {on['report_s']:.1f} s, calls {off['model_calls']} → "
            f"{on['model_calls']}, prompt tok {off['prompt_tokens']:,} → {on['prompt_tokens']:,} "
            f"({on['prompt_tokens'] / off['prompt_tokens']:.2f}x); the report's prompt "
            f"{single:,} tok in one call → {split:,} in its sections and frame, read "
            f"{single_read:,} → {read:,}"
        )
    return ["", "Report in sections (`--sections both`):", "", *lines] if lines else []


def _role(case: dict[str, Any], role: str, key: str) -> int:
    return int(case["roles"].get(role, {}).get(key, 0))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--profile", choices=[*PROFILES, "all"], default="all")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3, 6], help="research topics")
    parser.add_argument("--quick", action="store_true", help="cloud, K=1, one start-up sample")
    parser.add_argument("--json", action="store_true", help="JSON instead of Markdown")
    parser.add_argument(
        "--busy", type=int, default=0, help="processes that keep the cores busy during each case"
    )
    parser.add_argument(
        "--sections",
        choices=["off", "auto", "on", "both"],
        default="auto",
        help="report_in_sections for each case (auto, the default setting); both: each case "
        "off, then auto",
    )
    args = parser.parse_args(argv)
    profiles = list(PROFILES) if args.profile == "all" else [args.profile]
    ks, runs = args.k, startup.RUNS
    if args.quick:
        profiles, ks, runs = (profiles if args.profile != "all" else ["cloud"]), [1], 1
    sections = ("off", "auto") if args.sections == "both" else (args.sections,)
    results = measure(profiles, ks, runs, args.busy, sections)
    print(json.dumps(results, indent=2) if args.json else markdown(results))


if __name__ == "__main__":
    main()
