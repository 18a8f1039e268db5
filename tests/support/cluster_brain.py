"""A ResearchBrain for many threads at once: each question's topics (and so its searches)
carry the question's case label, so the fake Tavily's log tells threads apart; a question
with `ASK` in it is clarified first, any other is not.

`hold_reports` keeps every researcher's report request (sent after its search) waiting
until `release()`: the point at which a test kills an instance mid-research.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.support.brain import ResearchBrain, _texts
from tests.support.fakes.openai_server import InFlightBarrier, Reply, ScriptedOpenAIServer

CASE = re.compile(r"\bcase(\d+)\b")
ASK = "ASK"


def question(case: int, ask: bool = False) -> str:
    return f"case{case}: how well do heat pumps work in Oslo detached houses?" + (
        f" {ASK}" if ask else ""
    )


def searches_of(queries: list[str], case: int) -> int:
    """How many searches the fake Tavily received for one case's thread."""
    return sum(1 for query in queries if f"case{case} " in query)


@dataclass
class ClusterBrain(ResearchBrain):
    hold_reports: bool = False
    # Opens once this many first orchestrator requests wait together (runs in flight at once).
    start_barrier: InFlightBarrier | None = None
    held: int = 0  # report requests waiting now
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _released: asyncio.Event | None = None

    def release(self, server: ScriptedOpenAIServer) -> None:
        self.hold_reports = False
        server.loop.call_soon_threadsafe(self._release_event().set)

    def _release_event(self) -> asyncio.Event:
        if self._released is None:
            self._released = asyncio.Event()
        return self._released

    def _case(self, body: dict[str, Any]) -> str:
        found = CASE.search(" ".join(_texts(body, "user")))
        return f"case{found.group(1)}" if found else "case0"

    async def __call__(self, body: dict[str, Any]) -> Reply:
        from tests.support.brain import role_of

        role = role_of(body)
        if role == "orchestrator" and not _texts(body, "tool") and self.start_barrier:
            await self.start_barrier.wait()
        if role == "clarifier" and ASK not in " ".join(_texts(body, "user")):
            decision = {"need_clarification": False, "questions": [], "verification": "ok"}
            return Reply(content=json.dumps(decision))
        return await super().__call__(body)

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        case = self._case(body)
        self.topics = [f"{case} heat pump efficiency", f"{case} heat pump costs"]
        return super()._orchestrate(body)

    async def _research(self, body: dict[str, Any]) -> Reply:
        if self.hold_reports and _texts(body, "tool"):
            event = self._release_event()
            with self._lock:
                self.held += 1
            try:
                await event.wait()
            finally:
                with self._lock:
                    self.held -= 1
        return await super()._research(body)
