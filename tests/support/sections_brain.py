"""A scripted model for the report written in sections: it plans with todos, researches
its topics, and answers each section and frame call, logging when each arrived and ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.support.brain import INVENTED, LINK, ResearchBrain, role_of
from tests.support.fakes.openai_server import InFlightBarrier, Reply, ToolCall, message_text

TOPICS = [
    "heat pump efficiency in cold climates",
    "heat pump installation costs",
    "heat pump noise and siting rules",
]
TITLE = "Heat pumps in the cold: what the research found"


@dataclass
class SectionsBrain(ResearchBrain):
    """`events` is the order the section and frame calls arrived and ended in; a section on
    `invents` cites a page nobody retrieved."""

    topics: list[str] = field(default_factory=lambda: list(TOPICS))
    gather: InFlightBarrier | None = None
    invents: str = ""
    fails_once: str = ""  # a section whose first call the server answers with an error
    events: list[tuple[str, str]] = field(default_factory=list)
    bodies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    async def __call__(self, body: dict[str, Any]) -> Reply:
        role = role_of(body)
        self.bodies.setdefault(role, []).append(body)
        if role == "report_section":
            return await self._section(body)
        if role == "report_frame":
            return await self._frame()
        return await super().__call__(body)

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        results = [message_text(m) for m in body["messages"] if m.get("role") == "tool"]
        if not results:
            todos = [{"content": topic, "status": "pending"} for topic in self.topics]
            return Reply(tool_calls=[ToolCall("write_todos", {"todos": todos})])
        if all(text.startswith("Plan saved") for text in results):
            return Reply(tool_calls=[ToolCall("research", {"topic": t}) for t in self.topics])
        return super()._orchestrate(body)

    async def _section(self, body: dict[str, Any]) -> Reply:
        user = next(message_text(m) for m in body["messages"] if m.get("role") == "user")
        topic = next(t for t in self.topics if f"Write the section on: {t}\n" in user)
        await self._meet(topic)
        if topic == self.fails_once:
            self.fails_once = ""
            return Reply(status=500, error_message="scripted outage")
        links = " ".join(f"[claim {i}]({url})" for i, url in enumerate(LINK.findall(user), 1))
        if topic == self.invents:
            links += f" And [an invented study]({INVENTED})."
        return Reply(content=f"## About {topic}\n\nWhat was found on {topic}: {links}\n")

    async def _frame(self) -> Reply:
        await self._meet("frame")
        return Reply(
            content=f"# {TITLE}\n\nThe opening paragraph.\n\n## Conclusion\n\nThe conclusion."
        )

    async def _meet(self, name: str) -> None:
        self.events.append(("arrived", name))
        if self.gather is not None:
            await self.gather.wait()
        self.events.append(("ended", name))
