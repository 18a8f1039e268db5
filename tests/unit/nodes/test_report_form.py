"""What the reader asked of the report reaches the writer: the question's language (or the
setting's), the length's range, and the reader's own form over both."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage

from deep_research.config.settings import Context
from deep_research.nodes import planning, report_form


def state(question: str) -> Any:
    return {"question": question, "messages": [HumanMessage(question)]}


def test_the_question_s_language_is_named_to_the_writer() -> None:
    wishes = report_form.wishes(state("Wie effizient sind Wärmepumpen?"), Context())
    assert "in German, the language of the user's question" in wishes
    # Everything is written in it but the links, which stay as the researchers wrote them.
    assert "(title, headings, text, link labels) in German" in wishes
    assert "not links: URLs and `#:~:text=` parts exactly as\nwritten" in wishes
    assert "in Chinese" in report_form.wishes(state("热泵的效率如何？"), Context())


def test_the_setting_wins_over_the_question_and_an_unclear_one_is_not_guessed() -> None:
    chosen = Context(report_language="ja")
    assert "in Japanese (the reader's setting)" in report_form.wishes(state("Heat pumps?"), chosen)
    assert report_form.report_language(state("Wie geht das?"), chosen) == "ja"
    assert f"in {report_form.UNKNOWN}" in report_form.wishes(state("Heat pumps"), Context())


def test_the_length_s_range_and_the_reader_s_own_form_are_in_the_wishes() -> None:
    brief = report_form.wishes(state("How do heat pumps work?"), Context(report_length="brief"))
    assert "150-400 words (brief)" in brief and "a few paragraphs" in brief
    detailed = report_form.wishes(state("How?"), Context(report_length="detailed"))
    assert "1,500-3,000 words (detailed)" in detailed
    assert "a table" in brief and "follow the request instead" in brief


def test_the_wishes_join_the_planning_prompt_once_research_came_back() -> None:
    question = "Wie effizient sind Wärmepumpen?"
    result = ToolMessage("findings", tool_call_id="r1", name="research")
    context = Context(report_length="brief")
    before = planning.planning_messages(state(question), context)
    after = planning.planning_messages(
        {**state(question), "messages": [HumanMessage(question), result]}, context
    )
    wishes = report_form.wishes(state(question), context)
    assert wishes not in before[0].text and after[0].text.endswith(wishes)
