"""A ResearchBrain for private research: it cites the library's `file:` links it is shown."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.support.brain import ResearchBrain, _texts
from tests.support.fakes.openai_server import Reply, ToolCall

FILE_LINK = re.compile(r"\]\((file:///[^)\s]+)\)")


@dataclass
class LibraryBrain(ResearchBrain):
    topics: list[str] = field(default_factory=lambda: ["heat pumps in cold weather"])

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        results = _texts(body, "tool")
        if not results:
            return Reply(tool_calls=[ToolCall("research", {"topic": t}) for t in self.topics])
        links = [link for text in results for link in FILE_LINK.findall(text)]
        return Reply(content=self._report("From your documents", links))

    async def _research(self, body: dict[str, Any]) -> Reply:
        results = _texts(body, "tool")
        if not results:
            return await super()._research(body)
        links = FILE_LINK.findall("\n".join(results))
        return Reply(content="Findings: " + " ".join(f"[passage]({url})" for url in links))
