"""runtime.prompts: prompt files filled with named values; other braces kept."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from deep_research.errors import DeepResearchError
from deep_research.runtime.prompts import PromptError, render

PROMPTS = Path(__file__).parents[3] / "prompts"


def test_every_placeholder_is_filled_with_its_value() -> None:
    text = render("research_limit", limit=4)
    assert text.count("at most 4 research calls") == 1 and "the first 4 are" in text
    assert "{limit}" not in text
    raw = (PROMPTS / "research_limit.md").read_text(encoding="utf-8")
    assert text == raw.replace("{limit}", "4")


def test_the_date_defaults_to_today_and_can_be_given() -> None:
    today = date.today().strftime("%A, %B %d, %Y")
    assert today in render("researcher", researcher="a web researcher")
    given = render("researcher", researcher="a web researcher", date="Monday, January 01, 2024")
    assert "Monday, January 01, 2024" in given and today not in given


def test_json_examples_keep_their_braces() -> None:
    text = render("clarifier", form="open")
    assert '{"need_clarification": true, "questions": ["...", "..."], "verification": ""}' in text


def test_values_are_inserted_verbatim_not_read_as_placeholders() -> None:
    hostile = "{date} {limit} \\1 \\g<0> \x1b[31m"  # placeholders and regex escapes in a value
    text = render("plan_replaced", plan=hostile)
    assert hostile in text


def test_a_missing_value_names_the_prompt_and_the_placeholder() -> None:
    with pytest.raises(PromptError, match=r"'research_limit' needs a value for \{limit\}"):
        render("research_limit")


def test_a_missing_prompt_is_a_prompt_error() -> None:
    with pytest.raises(PromptError, match="'no_such_prompt' not found"):
        render("no_such_prompt")
    # Callers catch it as the package's error, or as the KeyError it also is.
    assert issubclass(PromptError, DeepResearchError) and issubclass(PromptError, KeyError)


@pytest.mark.parametrize("path", sorted(PROMPTS.glob("*.md")), ids=lambda p: p.stem)
def test_each_prompt_renders_when_given_its_placeholders(path: Path) -> None:
    names = set(re.findall(r"\{([a-z_]+)\}", path.read_text(encoding="utf-8")))
    text = render(path.stem, **{name: f"<{name}-value>" for name in names})
    assert all(f"<{name}-value>" in text for name in names)
