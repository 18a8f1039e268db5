"""A user's defaults (three researchers at once, the report in sections where it pays) on a
one-slot server and on a parallel one: the run finds out which it is from its own calls.

Each case is the benchmark's (`python -m benchmarks.case`): the real graph against the
scripted world in its own process, the laptop profile's server answering one request at a
time with a one-prompt cache (as mlx_lm.server), the cloud profile's all at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.support.cli import REPO

pytestmark = pytest.mark.slow  # each case starts a world process and runs a whole graph


def case(profile: str, one_slot_server: str = "auto") -> dict[str, Any]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "ONE_SLOT_SERVER": one_slot_server,
    }
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.case", profile, "3", "auto"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def researchers(result: dict[str, Any]) -> list[dict[str, Any]]:
    calls = [c for c in result["calls"] if c["role"] == "researcher"]
    return sorted(calls, key=lambda c: c["started"])


def read(result: dict[str, Any]) -> int:
    return sum(c["processed_tokens"] for c in researchers(result))


def interleaved(calls: list[dict[str, Any]]) -> bool:
    """Whether a researcher's call came after another researcher's, following its own."""
    seen: list[str] = []
    for call in calls:
        if seen and seen[-1] == call["lane"]:
            continue
        if call["lane"] in seen:
            return True
        seen.append(call["lane"])
    return False


def test_on_a_one_slot_server_the_researchers_take_turns_and_the_report_is_one_call() -> None:
    watched, unwatched = case("laptop"), case("laptop", "off")
    found = watched["one_slot_at"]
    assert found and not unwatched["one_slot_at"], "found out with auto, never with off"
    # Their first calls go out together (that is how it is found out: when depends on how
    # busy the machine is); the calls sent after it come lane by lane, where without the
    # gate they interleave.
    after = [c for c in researchers(watched) if c["arrived"] > found]
    assert after and not interleaved(after), after
    assert interleaved(researchers(unwatched))
    # A researcher's call that follows its own continues the prompt the server cached: it
    # reads only what its conversation added.
    continued = [
        c for before, c in zip(after, after[1:], strict=False) if c["lane"] == before["lane"]
    ]
    assert continued and all(2 * c["processed_tokens"] < c["prompt_tokens"] for c in continued)
    assert read(watched) < read(unwatched), (read(watched), read(unwatched))
    # The report's parts would only queue there: one call writes it.
    roles = {c["role"] for c in watched["calls"]}
    assert "report_section" not in roles and "report_section" in {
        c["role"] for c in unwatched["calls"]
    }


def test_on_a_parallel_server_the_researchers_run_together_and_the_report_in_sections() -> None:
    result = case("cloud")
    assert not result["one_slot_at"], "a parallel server is never taken for a one-slot one"
    calls = researchers(result)
    # Their later calls overlap: none waits for another researcher to finish.
    later = calls[3:]
    overlapping = any(
        a["lane"] != b["lane"] and a["started"] < b["ended"] and b["started"] < a["ended"]
        for a in later
        for b in later
    )
    assert overlapping and interleaved(calls)
    assert "report_section" in {c["role"] for c in result["calls"]}
