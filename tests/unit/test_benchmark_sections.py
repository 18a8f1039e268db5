"""The benchmark's report in sections: the sections' calls are one parallel step on the
model's critical path (after the researchers, not among them), never counted as researchers,
and `--sections both` says what the split did to each case."""

from __future__ import annotations

import json
from typing import Any

from benchmarks import analysis
from benchmarks.__main__ import sections_compared


def call(lane: str, arrived: float, ended: float, role: str = "x") -> dict[str, Any]:
    return {"lane": lane, "role": role, "arrived": arrived, "started": arrived, "ended": ended}


CALLS = [
    call("main", 0, 1),
    call("topic a", 1, 5),
    call("topic b", 1, 3),
    call("report:topic a", 5, 8),
    call("report:topic b", 5, 9),
    call("report:frame", 5, 6),
]


def test_the_sections_follow_the_slowest_researcher_on_the_critical_path() -> None:
    path = analysis.chain(CALLS, parallel=True)
    assert [c["lane"] for c in path] == ["main", "topic a", "report:topic b"]
    assert analysis.efficiency(CALLS) == analysis.efficiency(CALLS[:3])


def case(sections: str, orchestrator: int, parts: int, wall: float) -> dict[str, Any]:
    roles = {"orchestrator": {"prompt_tokens": orchestrator, "processed_tokens": orchestrator}}
    if parts:
        roles["report_section"] = {"prompt_tokens": parts, "processed_tokens": parts // 2}
    return {
        "profile": "laptop",
        "k": 3,
        "sections": sections,
        "roles": roles,
        "wall_s": wall,
        "report_s": wall - 1,
        "model_calls": 12 if not parts else 15,
        "prompt_tokens": 20_000 + orchestrator + parts,
    }


def test_both_ways_are_compared_the_report_s_prompt_by_the_orchestrator_s_difference() -> None:
    lines = sections_compared([case("off", 3_000, 0, 20.0), case("auto", 1_000, 2_400, 15.0)])
    assert lines[1] == "Report in sections (`--sections both`):"
    assert "sections auto vs off: wall 20.0 → 15.0 s (0.75x)" in lines[-1]
    assert "calls 12 → 15" in lines[-1]
    assert (
        "2,000 tok in one call → 2,400 in its sections and frame, read 2,000 → 1,200" in (lines[-1])
    )
    assert sections_compared([case("off", 3_000, 0, 20.0)]) == []


def test_a_case_is_named_by_how_its_report_was_written_when_not_by_default() -> None:
    from benchmarks.__main__ import _name

    assert _name({"profile": "cloud", "sections": "auto"}) == "cloud"
    assert _name({"profile": "cloud", "sections": "off"}) == "cloud, one call"
    assert _name({"profile": "laptop", "sections": "on"}) == "laptop, sections"


def test_a_role_s_characters_are_its_calls_requests_added_up() -> None:
    calls = [
        {**call("topic a", 0, 1, "researcher"), "prompt_tokens": 1, "processed_tokens": 1}
        | {"completion_tokens": 1, "system_chars": 10, "prompt_chars": 100, "tool_chars": 30},
        {**call("topic b", 0, 1, "researcher"), "prompt_tokens": 2, "processed_tokens": 2}
        | {"completion_tokens": 1, "system_chars": 10, "prompt_chars": 150, "tool_chars": 30},
    ]
    row = analysis.per_role(calls)["researcher"]
    assert (row["calls"], row["prompt_chars"], row["tool_chars"]) == (2, 250, 60)


async def test_each_call_is_counted_by_the_text_its_tokens_are_estimated_from() -> None:
    from benchmarks.world import BenchBrain, Profile, prompt_text

    tool = {"type": "function", "function": {"name": "web_search", "parameters": {}}}
    body = {
        "messages": [
            {"role": "system", "content": "You are a web researcher."},
            {"role": "user", "content": "heat pumps"},
        ],
        "tools": [tool],
    }
    brain = BenchBrain(["heat pumps"], Profile("instant", 0.0, 0, 1e9, parallel=True))
    await brain(body)
    [counted] = brain.calls
    assert counted.prompt_chars == len(prompt_text(body)) > counted.tool_chars
    assert counted.tool_chars == len(json.dumps([tool]))
    assert counted.prompt_tokens == len(prompt_text(body)) // 4
