"""From one case's call log to its numbers: tokens per role, the model critical path, the
idle gaps on it and what caused them, parallel efficiency.

The critical path of a cloud run is its longest chain of dependent model calls: the
orchestrator's calls in order, and after each dispatch the slowest researcher's calls.
On a server that answers one request at a time (laptop) every call waits for the one
before, so the path is all the calls, and a gap is any time the server sits idle.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

GAP_REPORTED = 0.05  # seconds: shorter pauses are the event loop's own


def per_role(calls: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    roles: dict[str, dict[str, int]] = defaultdict(
        lambda: {
            "calls": 0,
            "prompt_tokens": 0,
            "processed_tokens": 0,
            "completion_tokens": 0,
            "system_chars": 0,
            "prompt_chars": 0,
            "tool_chars": 0,
        }
    )
    for call in calls:
        row = roles[call["role"]]
        row["calls"] += 1
        row["prompt_tokens"] += call["prompt_tokens"]
        row["processed_tokens"] += call["processed_tokens"]
        row["completion_tokens"] += call["completion_tokens"]
        row["system_chars"] += call["system_chars"]
        # Absent from a case run by code before they were counted (an A/B against it).
        row["prompt_chars"] += call.get("prompt_chars", 0)
        row["tool_chars"] += call.get("tool_chars", 0)
    return dict(roles)


def chain(calls: list[dict[str, Any]], parallel: bool) -> list[dict[str, Any]]:
    """The calls on the critical path, in order."""
    ordered = sorted(calls, key=lambda c: c["arrived"])
    if not parallel:
        return ordered
    path: list[dict[str, Any]] = []
    lanes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for call in ordered:
        if call["lane"] == "main":
            if lanes:  # a dispatch's researchers: the slowest lane is on the path
                path += max(lanes.values(), key=lambda lane: sum(_span(c) for c in lane))
                lanes.clear()
            path.append(call)
        else:
            report = call["lane"].startswith("report:")  # the report's sections, at once
            if report and any(not lane.startswith("report:") for lane in lanes):
                path += max(lanes.values(), key=lambda lane: sum(_span(c) for c in lane))
                lanes.clear()
            lanes[call["lane"]].append(call)
    if lanes:
        path += max(lanes.values(), key=lambda lane: sum(_span(c) for c in lane))
    return path


def _span(call: dict[str, Any]) -> float:
    return float(call["ended"] - call["started"])


def gaps(
    path: list[dict[str, Any]], activities: list[list[Any]], start: float, end: float
) -> list[dict[str, Any]]:
    """Idle time on the path (before, between and after its calls), with its causes."""
    found = []
    previous_end, previous_role = start, "run start"
    steps = [(c["started"], c["ended"], c["role"]) for c in path] + [(end, end, "run end")]
    for began, ended, role in steps:
        idle = began - previous_end
        if idle > GAP_REPORTED:
            found.append(
                {
                    "after": previous_role,
                    "before": role,
                    "at": round(previous_end - start, 2),
                    "seconds": round(idle, 2),
                    "cause": cause(activities, previous_end, began)
                    if role != "run end"
                    else "after the report: finalize, remember: "
                    + cause(activities, previous_end, began),
                }
            )
        previous_end, previous_role = ended, role
    return found


def cause(activities: list[list[Any]], start: float, end: float) -> str:
    """The timed activities that overlapped [start, end], longest overlap first."""
    overlap: dict[str, float] = defaultdict(float)
    for kind, began, ended in activities:
        seconds = min(end, ended) - max(start, began)
        if seconds >= 0.01:
            overlap[kind] = max(overlap[kind], seconds)
    if not overlap:
        return "graph (no search step ran)"
    ranked = sorted(overlap.items(), key=lambda item: -item[1])
    return ", ".join(f"{kind} {seconds:.2f} s" for kind, seconds in ranked[:3])


def efficiency(calls: list[dict[str, Any]]) -> float:
    """How much the researchers overlapped: the sum of their lanes' spans over K times the
    research phase's span (1.0: all started and finished together)."""
    lanes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for call in calls:
        if call["lane"] != "main" and not call["lane"].startswith("report:"):
            lanes[call["lane"]].append(call)  # the report's sections are not researchers
    if not lanes:
        return 1.0
    spans = [
        max(c["ended"] for c in lane) - min(c["arrived"] for c in lane) for lane in lanes.values()
    ]
    phase = max(c["ended"] for lane in lanes.values() for c in lane) - min(
        c["arrived"] for lane in lanes.values() for c in lane
    )
    return round(sum(spans) / (len(lanes) * phase), 3) if phase > 0 else 1.0


def checkpoint_cost(activities: list[list[Any]], wall: float) -> dict[str, Any]:
    """What the SQLite checkpointer's writes cost the run: one checkpoint a step, and each
    task's writes (durability "sync": the step waits for them). Seconds are summed over
    writes, so writes that overlapped (researchers in parallel) count each."""
    steps = [end - start for kind, start, end in activities if kind == "checkpoint"]
    writes = [end - start for kind, start, end in activities if kind == "checkpoint writes"]
    seconds = sum(steps) + sum(writes)
    return {
        "steps": len(steps),
        "task_writes": len(writes),
        "seconds": round(seconds, 3),
        "ms_per_step": round(1000 * seconds / len(steps), 2) if steps else None,
        "share_of_wall": round(seconds / wall, 4) if wall else None,
    }


def summarise(case: dict[str, Any], parallel: bool, time_scale: float) -> dict[str, Any]:
    calls, start = case["calls"], case["run_started"]
    path = chain(calls, parallel)
    critical = sum(_span(c) for c in path)
    wall = case["run_ended"] - start
    found = gaps(path, case["activities"], start, case["run_ended"])
    roles = per_role(calls)
    return {
        "profile": case["profile"],
        "k": case["k"],
        "model_calls": len(calls),
        "roles": roles,
        "prompt_tokens": sum(r["prompt_tokens"] for r in roles.values()),
        "processed_tokens": sum(r["processed_tokens"] for r in roles.values()),
        "completion_tokens": sum(r["completion_tokens"] for r in roles.values()),
        "system_chars": sum(r["system_chars"] for r in roles.values()),
        "prompt_chars": sum(r["prompt_chars"] for r in roles.values()),
        "tool_chars": sum(r["tool_chars"] for r in roles.values()),
        "searches": case["searches"],
        "page_fetches": case["fetches"],
        # The output state's usage (priced as the run's models and Tavily's credits are).
        "usage": case.get("usage"),
        "usd": (case.get("usage") or {}).get("usd"),
        "process_start_s": round(case["run_started"] - case["process_start"], 2),
        "wall_s": round(wall, 2),
        # When `finalize` put the report in state; `remember` follows, then the run ends.
        "report_s": round(case["report_published"] - start, 2),
        "model_critical_path_s": round(critical, 2),
        "ratio": round(wall / critical, 3) if critical else None,
        "time_scale": time_scale,
        "idle_gaps": found,
        # Between two model calls: the run's start and end are in the ratio, and listed.
        "longest_gap_s": max(
            (g["seconds"] for g in found if "run start" != g["after"] and g["before"] != "run end"),
            default=0.0,
        ),
        "parallel_efficiency": efficiency(calls),
        "checkpoints": checkpoint_cost(case["activities"], wall),
        "peak_rss_mb": round(case["peak_rss_mb"]),
    }
