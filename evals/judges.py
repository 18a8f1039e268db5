"""LLM-as-judge evaluators: one judge per criterion, each asked one narrow question.

`make_judges(judge)` returns async evaluators `(inputs, outputs, reference_outputs) ->
Score`, the argument names LangSmith's `aevaluate` passes by, so the same functions run
offline (`evals.run --judge`) and in an experiment. A reply the judge botches scores
`None` with the reason in the comment; it never fails the run.

Text from outside (the question, the report, cited pages) reaches the judge only inside
the data fences the agent uses for web text (`deep_research.text.fences.fence`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from deep_research.runtime import prompts
from deep_research.text.extract import clip
from deep_research.text.fences import fence, new_nonce
from evals.claims import NoQuestionError, cited_claims, question_of
from evals.evaluators import Score
from evals.judge_model import Judge, JudgeReplyError

REPORT_CHARS = 24_000  # what a judge reads of a report; small models have small contexts
VERDICTS = ("supported", "unsupported", "unknown")
LENGTHS = ("too_short", "right", "too_long")

Evaluator = Callable[..., Awaitable[Score]]
Args = Mapping[str, Any] | None


def _fenced(label: str, text: str, nonce: str) -> str:
    return f"{label}:\n{fence(text, nonce)}"


async def _ask(judge: Judge, prompt: str, nonce: str, *parts: tuple[str, str]) -> dict[str, Any]:
    system = prompts.render(prompt, nonce=nonce)
    user = "\n\n".join(_fenced(label, text, nonce) for label, text in parts)
    return await judge.verdict(system, user)


def _reason(verdict: Mapping[str, Any]) -> str:
    return " ".join(str(verdict.get("reason") or "").split())[:300]


def _report(outputs: Mapping[str, Any]) -> str:
    report = outputs.get("final_report")
    if not isinstance(report, str):
        raise ValueError("outputs need a 'final_report' string (the graph's output state)")
    return clip(report, REPORT_CHARS)


def _rating(verdict: Mapping[str, Any]) -> float | None:
    """A 1-5 rating as 0-1; anything else (missing, out of range, words) is no score."""
    try:
        rating = float(verdict.get("score"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return (rating - 1) / 4 if 1 <= rating <= 5 else None


def make_judges(judge: Judge) -> list[Evaluator]:
    """The four judges, in the order their scores are shown."""

    async def judge_structure(inputs: Args = None, outputs: Args = None, **_: Any) -> Score:
        """Does the report's shape follow what the request asked for (sections, table, list)?"""
        outs = outputs or {}
        nonce = new_nonce()
        try:
            parts = [("Request", question_of(inputs, outs)), ("Report", _report(outs))]
            verdict = await _ask(judge, "judge_structure", nonce, *parts)
        except (JudgeReplyError, NoQuestionError) as error:
            return Score(key="judge_structure", score=None, comment=str(error))
        score = _rating(verdict)
        comment = _reason(verdict) if score is not None else f"no 1-5 score: {verdict}"[:300]
        return Score(key="judge_structure", score=score, comment=comment)

    async def judge_length(inputs: Args = None, outputs: Args = None, **_: Any) -> Score:
        """Is the report as long as the request asked (or, when it did not say, as it needs)?"""
        outs = outputs or {}
        report = _report(outs)
        words = len(report.split())  # counted here: small models cannot count words
        nonce = new_nonce()
        try:
            parts = [("Request", question_of(inputs, outs)), ("Report", report)]
            verdict = await _ask(judge, "judge_length", nonce, *parts, ("Word count", str(words)))
        except (JudgeReplyError, NoQuestionError) as error:
            return Score(key="judge_length", score=None, comment=str(error))
        said = str(verdict.get("verdict", "")).strip().lower()
        if said not in LENGTHS:
            return Score(key="judge_length", score=None, comment=f"no verdict: {verdict}"[:300])
        comment = f"{said}, {words} words: {_reason(verdict)}"
        return Score(key="judge_length", score=float(said == "right"), comment=comment)

    async def judge_groundedness(inputs: Args = None, outputs: Args = None, **_: Any) -> Score:
        """FACT-style: each cited claim against the passage it cites; share supported."""
        outs = outputs or {}
        counts = dict.fromkeys(VERDICTS, 0)
        unsupported: list[str] = []
        for claim in cited_claims(_report(outs), list(outs.get("sources") or [])):
            said = "unknown"
            if claim.passage is not None:
                nonce = new_nonce()
                parts = [("Claim", claim.text), ("Passage", claim.passage)]
                try:
                    verdict = await _ask(judge, "judge_groundedness", nonce, *parts)
                    said = str(verdict.get("verdict", "")).strip().lower()
                except JudgeReplyError:
                    said = "unknown"
                said = said if said in VERDICTS else "unknown"
            counts[said] += 1
            if said == "unsupported":
                unsupported.append(claim.text[:80])
        judged = counts["supported"] + counts["unsupported"]
        comment = ", ".join(f"{n} {v}" for v, n in counts.items())
        if unsupported:
            comment += "; unsupported: " + " | ".join(unsupported[:3])
        if not sum(counts.values()):
            comment = "no cited claims"
        score = counts["supported"] / judged if judged else None
        return Score(key="judge_groundedness", score=score, comment=comment)

    async def judge_coverage(
        inputs: Args = None, outputs: Args = None, reference_outputs: Args = None, **_: Any
    ) -> Score:
        """Share of the question's facets (the dataset's `facets`) the report covers."""
        outs = outputs or {}
        facets = [f for f in (reference_outputs or {}).get("facets") or [] if isinstance(f, str)]
        if not facets:
            return Score(key="judge_coverage", score=None, comment="no facets for this question")
        listing = "\n".join(f"{n}. {facet}" for n, facet in enumerate(facets, 1))
        nonce = new_nonce()
        try:
            parts = [("Request", question_of(inputs, outs)), ("Facets", listing)]
            verdict = await _ask(judge, "judge_coverage", nonce, *parts, ("Report", _report(outs)))
        except (JudgeReplyError, NoQuestionError) as error:
            return Score(key="judge_coverage", score=None, comment=str(error))
        covered = _numbers(verdict.get("covered"), len(facets))
        missing = [facets[n - 1] for n in range(1, len(facets) + 1) if n not in covered]
        comment = f"{len(covered)} of {len(facets)} facets covered"
        if missing:
            comment += "; missing: " + "; ".join(missing)
        return Score(key="judge_coverage", score=len(covered) / len(facets), comment=comment)

    return [judge_structure, judge_length, judge_groundedness, judge_coverage]


def _numbers(value: Any, limit: int) -> set[int]:
    """Facet numbers from the judge: ints or numeric strings within 1..limit, others ignored."""
    found: set[int] = set()
    for item in value if isinstance(value, list) else []:
        try:
            number = int(str(item).strip().rstrip("."))
        except ValueError:
            continue
        if 1 <= number <= limit:
            found.add(number)
    return found
