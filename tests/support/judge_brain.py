"""A scripted judge model for the evals' LLM judges, served by ScriptedOpenAIServer.

It recognises which judge asks from the system prompt's first line, reads the fenced data
in the user message, and answers by simple rules a test can predict: groundedness says
"supported" when the claim's first number is in the passage, coverage covers a facet
whose first word is in the report, pairwise prefers the report with more links. `wrap`
turns each answer into the shape a small model might send (think block, fence, cut-off
JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.fakes.openai_server import Reply, last_user_text, system_text

FENCED = re.compile(r"^([^\n]+?):\n<<<data ([0-9a-f]+)>>>\n(.*?)\n<<<end data \2>>>", re.S | re.M)
NUMBER = re.compile(r"\d+")
LINK = re.compile(r"\]\(https?://")

KINDS = {
    "structure": "does its structure follow",
    "length": "is its length what",
    "groundedness": "one claim from a research report",
    "coverage": "which of the listed facets",
    "pairwise": "compare two research reports",
}


def judge_kind(body: dict[str, Any]) -> str:
    system = " ".join(system_text(body).split())  # prompts wrap their lines anywhere
    for kind, marker in KINDS.items():
        if marker in system:
            return kind
    raise ValueError(f"not a judge prompt: {system[:80]!r}")


def fenced_parts(body: dict[str, Any]) -> dict[str, str]:
    """The user message's parts by label ("Request", "Report", "Claim", ...)."""
    return {label: text for label, _, text in FENCED.findall(last_user_text(body))}


def as_json(verdict: dict[str, Any]) -> str:
    return json.dumps(verdict)


def small_model(verdict: dict[str, Any]) -> str:
    """Reasoning first, then the JSON in a fence with prose, cut off before it closes."""
    text = json.dumps(verdict)
    return f"<think>Let me weigh this.</think>\nHere is my verdict:\n```json\n{text[:-2]}"


@dataclass
class JudgeBrain:
    structure: int | str = 4
    length: str = "right"
    wrap: Callable[[dict[str, Any]], str] = as_json
    asked: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        kind = judge_kind(body)
        self.asked.append(kind)
        parts = fenced_parts(body)
        verdict = getattr(self, f"_{kind}")(parts)
        return Reply(content=self.wrap(verdict))

    def _structure(self, parts: dict[str, str]) -> dict[str, Any]:
        return {"score": self.structure, "reason": "Sections follow the question."}

    def _length(self, parts: dict[str, str]) -> dict[str, Any]:
        return {"verdict": self.length, "reason": "No length was asked."}

    def _groundedness(self, parts: dict[str, str]) -> dict[str, Any]:
        numbers = NUMBER.findall(parts["Claim"])
        said = "supported" if numbers and numbers[0] in parts["Passage"] else "unsupported"
        return {"verdict": said, "reason": "Checked the first number."}

    def _coverage(self, parts: dict[str, str]) -> dict[str, Any]:
        facets = [line.split(". ", 1)[1] for line in parts["Facets"].splitlines()]
        report = parts["Report"].lower()
        covered = [n for n, f in enumerate(facets, 1) if f.split()[0].lower() in report]
        missing = [n for n in range(1, len(facets) + 1) if n not in covered]
        return {"covered": covered, "missing": missing, "reason": "Looked for each facet."}

    def _pairwise(self, parts: dict[str, str]) -> dict[str, Any]:
        first, second = (len(LINK.findall(parts[f"Report {n}"])) for n in (1, 2))
        winner = "1" if first > second else "2" if second > first else "tie"
        return {"winner": winner, "reason": "More sources."}
