"""A scripted 'model' for the whole graph: replies are derived from each request.

The role is recognised from the tools offered (orchestrator: `research`; researcher:
`web_search`) or, for tool-less calls, from the system prompt. Replies only cite URLs that
appear in the request itself, so a report's citations trace back to the search API.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.support.fakes.openai_server import (
    InFlightBarrier,
    Reply,
    ToolCall,
    message_text,
    system_text,
    tools_offered,
)

LINK = re.compile(r"\]\((https?://[^)\s]+)\)")
FAIL_MARKER = "DOOMED"


def role_of(body: dict[str, Any]) -> str:
    tools = tools_offered(body)
    system = system_text(body)
    if "research" in tools:
        return "orchestrator"
    if "web_search" in tools:
        return "researcher"
    if "intake step" in system:
        return "clarifier"
    if "research phase is over" in system:
        return "report_writer"
    if "one part of a research report" in system:
        framing = any("Write the frame" in text for text in _texts(body, "user"))
        return "report_frame" if framing else "report_section"
    return "researcher_wrap_up"


def _texts(body: dict[str, Any], role: str) -> list[str]:
    return [message_text(m) for m in body["messages"] if m.get("role") == role]


@dataclass
class ResearchBrain:
    """Configurable behaviour; the defaults give a clarify → 2 researchers → report run."""

    topics: list[str] = field(
        default_factory=lambda: [
            "heat pump efficiency in cold climates",
            "heat pump installation costs",
        ]
    )
    queries_per_search: int = 1
    barrier: InFlightBarrier | None = None
    barrier_misses: list[str] = field(default_factory=list)

    async def __call__(self, body: dict[str, Any]) -> Reply:
        role = role_of(body)
        if role == "orchestrator":
            return self._orchestrate(body)
        if role == "researcher":
            return await self._research(body)
        if role == "clarifier":
            return self._clarify(body)
        findings = "\n".join(_texts(body, "user") + _texts(body, "tool"))
        return Reply(content=self._report("Final report", LINK.findall(findings)))

    def _clarify(self, body: dict[str, Any]) -> Reply:
        answered = any("Before I start" in t for t in _texts(body, "assistant"))
        decision: dict[str, Any] = (
            {
                "need_clarification": False,
                "questions": [],
                "verification": "I will research heat pumps in cold climates.",
            }
            if answered
            else {
                "need_clarification": True,
                "questions": ["Which climate zone?", "Home or commercial buildings?"],
            }
        )
        # Prose around the JSON, as small models write it; response_format is not relied on.
        return Reply(content=f"Here is my decision:\n```json\n{json.dumps(decision)}\n```\nThanks")

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        results = _texts(body, "tool")
        if not results:
            calls = [ToolCall("research", {"topic": topic}) for topic in self.topics]
            return Reply(tool_calls=calls)
        links = [link for text in results for link in LINK.findall(text)[:2]]
        return Reply(content=self._report("Heat pumps in cold climates", links))

    async def _research(self, body: dict[str, Any]) -> Reply:
        topic = _texts(body, "user")[0]
        results = _texts(body, "tool")
        if not results:
            if self.barrier is not None and not await self.barrier.wait():
                self.barrier_misses.append(topic)
            if FAIL_MARKER in topic:
                return Reply(status=400, error_message=f"model refused topic {topic!r}")
            queries = [f"{topic} {i}".strip() for i in range(self.queries_per_search)]
            return Reply(tool_calls=[ToolCall("web_search", {"queries": queries})])
        links = LINK.findall("\n".join(results))
        return Reply(
            content=f"Findings on {topic}: "
            + " ".join(f"[finding {i}]({url})" for i, url in enumerate(links, 1))
        )

    @staticmethod
    def _report(title: str, links: list[str]) -> str:
        cited = " ".join(f"[source {i}]({url})" for i, url in enumerate(links, 1))
        return f"# {title}\n\nWhat the researchers found: {cited}.\n"


COULD_NOT_FIND = "I could not find sources on this question. Summary: no evidence was retrieved."
INVENTED = "https://invented.example/heat-pumps"


@dataclass
class UnsourcedBrain(ResearchBrain):
    """Researchers find nothing usable; the report says so (`cites="nothing"`) or cites a
    page nobody retrieved (`cites="invented"`), as small models do when research is empty."""

    cites: str = "nothing"

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        reply = super()._orchestrate(body)
        if reply.tool_calls:
            return reply  # the research calls
        if self.cites == "invented":
            return Reply(
                content=f"# Heat pumps\n\nThey work in the cold ([IEA study]({INVENTED}))."
            )
        return Reply(content=COULD_NOT_FIND)

    async def _research(self, body: dict[str, Any]) -> Reply:
        reply = await super()._research(body)
        return reply if reply.tool_calls else Reply(content="No usable results.")


def no_results(query: str, max_results: int) -> list[dict[str, Any]]:
    """A search API corpus that finds nothing."""
    return []
