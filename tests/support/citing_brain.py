"""A ResearchBrain whose reports cite the way the prompts teach, plus two bad citations.

Researchers cite with a quote in the link title (code turns it into a text fragment).
The orchestrator's final report copies those links and adds one link to a page nobody
retrieved and one fragment whose words are not on the (really retrieved) page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from tests.support.brain import LINK, ResearchBrain, _texts
from tests.support.fakes.openai_server import Reply

# Words every fake Tavily result contains ("Source N explains key facts about <query>.").
QUOTE = "explains key facts about"


@dataclass
class CitingBrain(ResearchBrain):
    fabricated_url: str = "https://fabricated.example.com/study"
    missing_passage: str = "heat pumps double in price every winter"

    async def _research(self, body: dict[str, Any]) -> Reply:
        reply = await super()._research(body)
        if reply.tool_calls or reply.status != 200:
            return reply
        links = LINK.findall("\n".join(_texts(body, "tool")))
        cited = " ".join(f'[finding {i}]({url} "{QUOTE}")' for i, url in enumerate(links, 1))
        return Reply(content=f"Findings: {cited}")

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        reply = super()._orchestrate(body)
        results = _texts(body, "tool")
        if reply.tool_calls or not results:
            return reply
        real = LINK.findall(results[0])[0].split("#")[0]
        wrong = f"{real}#:~:text={quote(self.missing_passage)}"
        return Reply(
            content=f"{reply.content}\nA bold claim [per a study]({self.fabricated_url}). "
            f"A doubtful one [per this page]({wrong}).\n"
        )
