"""A brain for plan-review runs: it researches a plan the user wrote, and revises after
feedback (one new topic per revision, named by the turn)."""

from __future__ import annotations

import re
from typing import Any

from tests.support.brain import ResearchBrain
from tests.support.fakes.openai_server import Reply, ToolCall

PENDING = re.compile(r"^- \[pending\] (.+)$", re.MULTILINE)


class PlanBrain(ResearchBrain):
    """The user's replaced plan is researched item by item; feedback gets a revised topic."""

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        text = str(last.get("content")) if last.get("role") == "user" else ""
        if "replaced it" in text:
            topics = PENDING.findall(text)
            return Reply(tool_calls=[ToolCall("research", {"topic": t}) for t in topics])
        if "asked for changes" in text:
            turn = sum(m.get("role") == "assistant" for m in body["messages"])
            return Reply(tool_calls=[ToolCall("research", {"topic": f"revised topic {turn}"})])
        return super()._orchestrate(body)
