"""A CitingBrain that writes its report in the language, and at the length, the writer's
prompt asks for: as a model that follows its instructions does.

English, German or Chinese (what the prompt's "Write all of it (...) in" names; English
when it names none of them); as many words as the middle of the prompt's "N-M words" range.
Its links are the researchers' (text fragments included) plus CitingBrain's two bad ones,
so a report in any language is still checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.support.brain import LINK, _texts
from tests.support.citing_brain import CitingBrain
from tests.support.fakes.openai_server import Reply, system_text

_LANGUAGE = re.compile(r"Write all of it \([^)]*\) in (\w+)")
_RANGE = re.compile(r"Length: ([\d,]+)-([\d,]+) words")
# Title, the sentence around the citations, and one filler word, in each language.
_WORDING = {
    "English": ("Heat pumps in the cold", "The researchers found", "efficiency"),
    "German": ("Wärmepumpen bei Kälte", "Die Forschenden fanden", "Effizienz"),
    "Chinese": ("寒冷气候中的热泵", "研究人员发现", "效率"),
}


@dataclass
class PolyglotBrain(CitingBrain):
    asked: list[str] = field(default_factory=list)  # the language each report was asked in

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        results = _texts(body, "tool")
        if not results:
            return super()._orchestrate(body)
        system = system_text(body)
        named = _LANGUAGE.search(system)
        language = named.group(1) if named and named.group(1) in _WORDING else "English"
        self.asked.append(named.group(1) if named else "")
        title, found, filler = _WORDING[language]
        links = [link for text in results for link in LINK.findall(text)[:2]]
        cited = " ".join(f"[{filler} {i}]({url})" for i, url in enumerate(links, 1))
        words = [filler] * _words(system)
        return Reply(
            content=f"# {title}\n\n{found}: {cited}.\n\n## {filler}\n\n{' '.join(words)}.\n"
            f"[{filler}]({self.fabricated_url})\n"
        )


def _words(system: str) -> int:
    """The middle of the range the prompt asks for; 100 words when it asks for none."""
    asked = _RANGE.search(system)
    if not asked:
        return 100
    low, high = (int(part.replace(",", "")) for part in asked.groups())
    return (low + high) // 2
