"""A scripted model for follow-up questions: research what a follow-up misses, no more.

The first question researches `ResearchBrain`'s two topics. A follow-up naming MISSING,
with no research results after it yet, researches MISSING_TOPICS; any other question on
a thread that has results (ANSWERED) is answered from them, with no research at all.
"""

from __future__ import annotations

from typing import Any

from tests.support.brain import ResearchBrain
from tests.support.fakes.openai_server import Reply, ToolCall, message_text

ANSWERED = "Which of the sources you read covers installation costs?"
MISSING = "And what about noise and maintenance?"
MISSING_TOPICS = ("heat pump noise levels", "heat pump maintenance schedules")
FIRST_TOPICS = tuple(ResearchBrain().topics)


class FollowUpBrain(ResearchBrain):
    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        asked = [i for i, m in enumerate(messages) if MISSING in message_text(m)]
        researched = any(m.get("role") == "tool" for m in messages[asked[-1] :]) if asked else True
        if not researched:
            return Reply(tool_calls=[ToolCall("research", {"topic": t}) for t in MISSING_TOPICS])
        return super()._orchestrate(body)
