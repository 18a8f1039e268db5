"""Pairwise comparison of two configurations' reports on the same questions.

python -m evals.pairwise --judge PROVIDER:MODEL A_DIR B_DIR [--json]

A_DIR and B_DIR hold saved outputs (`evals.run --generate DIR --set ...` writes them);
files with the same name answer the same question. Each pair is judged twice, A shown
first and then B shown first, because judges favour a position; the two verdicts are
averaged, so a judge that always picks "Report 1" ends in a tie.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from deep_research.config.names import ConfigError
from deep_research.runtime import prompts
from deep_research.text.fences import fence, new_nonce
from evals.judge_model import Judge, JudgeReplyError, judge_from_spec
from evals.judges import REPORT_CHARS
from evals.run import EvalInputError, load_outputs

# What each verdict gives report A, by position of A: shown first, shown second.
_POINTS = {
    True: {"1": 1.0, "2": 0.0, "tie": 0.5},
    False: {"1": 0.0, "2": 1.0, "tie": 0.5},
}


@dataclass
class Comparison:
    name: str
    a_first: str | None  # the judge's raw verdict with A as Report 1 ("1", "2", "tie", None)
    b_first: str | None
    preference: float | None  # A's share: 1 = A better in both orders, 0 = B better
    winner: str  # "a", "b", "tie" or "unjudged"
    consistent: bool  # both orders named the same report (or both a tie)


async def _verdict(judge: Judge, question: str, first: str, second: str) -> str | None:
    nonce = new_nonce()
    user = "\n\n".join(
        f"{label}:\n{fence(text, nonce)}"
        for label, text in (
            ("Request", question),
            ("Report 1", first[:REPORT_CHARS]),
            ("Report 2", second[:REPORT_CHARS]),
        )
    )
    try:
        verdict = await judge.verdict(prompts.render("judge_pairwise", nonce=nonce), user)
    except JudgeReplyError:
        return None
    said = str(verdict.get("winner", "")).strip().lower().removeprefix("report").strip()
    return said if said in ("1", "2", "tie") else None


async def compare(judge: Judge, name: str, a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    question = str(a.get("question") or b.get("question") or "")
    report_a, report_b = str(a["final_report"]), str(b["final_report"])
    a_first = await _verdict(judge, question, report_a, report_b)
    b_first = await _verdict(judge, question, report_b, report_a)
    points = [_POINTS[True][a_first]] if a_first else []
    points += [_POINTS[False][b_first]] if b_first else []
    if not points:
        return Comparison(name, a_first, b_first, None, "unjudged", False)
    preference = sum(points) / len(points)
    winner = "a" if preference > 0.5 else "b" if preference < 0.5 else "tie"
    consistent = len(points) == 2 and points[0] == points[1]
    return Comparison(name, a_first, b_first, preference, winner, consistent)


def pair_up(a_dir: Path, b_dir: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Outputs present on both sides, matched by file name; at least one pair, or an error."""
    side_a = {path.name: outputs for path, outputs in load_outputs([a_dir])}
    side_b = {path.name: outputs for path, outputs in load_outputs([b_dir])}
    names = sorted(side_a.keys() & side_b.keys())
    if not names:
        raise EvalInputError(f"no saved output has the same file name in {a_dir} and {b_dir}")
    return [(name, side_a[name], side_b[name]) for name in names]


def summary(results: list[Comparison]) -> dict[str, Any]:
    judged = [r for r in results if r.preference is not None]
    wins = {side: sum(r.winner == side for r in results) for side in ("a", "b", "tie")}
    return {
        "pairs": len(results),
        "a_wins": wins["a"],
        "b_wins": wins["b"],
        "ties": wins["tie"],
        "unjudged": len(results) - len(judged),
        # B's share of the points: 0.5 means no difference the judge could see.
        "b_win_rate": (1 - sum(r.preference or 0 for r in judged) / len(judged))
        if judged
        else None,
        "position_consistent": sum(r.consistent for r in judged),
    }


async def run_pairs(judge: Judge, a_dir: Path, b_dir: Path) -> list[Comparison]:
    return [await compare(judge, name, a, b) for name, a, b in pair_up(a_dir, b_dir)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.pairwise",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--judge", required=True, metavar="PROVIDER:MODEL")
    parser.add_argument("a", type=Path, metavar="A_DIR", help="saved outputs of configuration A")
    parser.add_argument("b", type=Path, metavar="B_DIR", help="saved outputs of configuration B")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    try:
        judge = judge_from_spec(args.judge)
        results = asyncio.run(run_pairs(judge, args.a, args.b))
    except (ConfigError, EvalInputError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    totals = summary(results)
    if args.json:
        print(json.dumps({"summary": totals, "pairs": [asdict(r) for r in results]}, indent=2))
        return 0
    for r in results:
        shown = "n/a" if r.preference is None else f"{r.preference:.2f}"
        print(f"{r.name:<32} {r.winner:<8} A={shown}  (A first: {r.a_first}, B first: {r.b_first})")
    rate = totals["b_win_rate"]
    print(
        f"A wins {totals['a_wins']}, B wins {totals['b_wins']}, ties {totals['ties']}, "
        f"unjudged {totals['unjudged']}; B's win rate "
        f"{'n/a' if rate is None else f'{rate:.2f}'}; "
        f"{totals['position_consistent']} of {totals['pairs']} consistent across orders"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
