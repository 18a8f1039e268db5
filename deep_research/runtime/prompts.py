"""Prompt files from `prompts/`, filled with named values such as `{date}`."""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from pathlib import Path

from deep_research.errors import DeepResearchError

# Source checkout: prompts/ beside the package; installed wheel: deep_research/prompts/.
_PACKAGE = Path(__file__).parents[1]
_SEARCH_PATH = (_PACKAGE.parent / "prompts", _PACKAGE / "prompts")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class PromptError(DeepResearchError, KeyError):
    """A prompt file is missing, or a placeholder in it was given no value."""


@cache
def _read(name: str) -> str:
    for folder in _SEARCH_PATH:
        path = folder / f"{name}.md"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise PromptError(f"prompt {name!r} not found in {', '.join(map(str, _SEARCH_PATH))}")


def render(name: str, **values: object) -> str:
    """Fill `{placeholder}`s in `prompts/<name>.md`; other braces (JSON examples) stay as-is."""
    values.setdefault("date", date.today().strftime("%A, %B %d, %Y"))

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise PromptError(f"prompt {name!r} needs a value for {{{key}}}")
        return str(values[key])

    return _PLACEHOLDER.sub(fill, _read(name))
