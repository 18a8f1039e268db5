"""A brain for plan-review runs: it revises after feedback (one new topic per revision,
named by the turn). A plan the user wrote is dispatched in code, never asked of it."""

from __future__ import annotations

from typing import Any

from tests.support.brain import ResearchBrain
from tests.support.fakes.openai_server import Reply, ToolCall


class PlanBrain(ResearchBrain):
    """Feedback gets a revised topic."""

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        text = str(last.get("content")) if last.get("role") == "user" else ""
        if "asked for changes" in text:
            turn = sum(m.get("role") == "assistant" for m in body["messages"])
            return Reply(tool_calls=[ToolCall("research", {"topic": f"revised topic {turn}"})])
        return super()._orchestrate(body)
