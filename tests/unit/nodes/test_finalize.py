"""The last node: what it publishes from content blocks, odd Markdown and failed topics."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage

from deep_research.citations.markdown import parse
from deep_research.nodes.finalize import finalize
from deep_research.state import ResearchFailure, Source

PAGE = "https://real.example/page"
SOURCES = [Source(url=PAGE, title="Real", content="Heat pumps keep a COP of 2.", found_by="t")]


def hrefs(markdown: str) -> list[str]:
    return [
        str(child.attrs["href"])
        for token in parse(markdown)
        for child in token.children or []
        if child.type == "link_open"
    ]


def published(message: AIMessage, failures: list[ResearchFailure] | None = None) -> str:
    state: dict[str, Any] = {"messages": [message], "sources": SOURCES, "failures": failures or []}
    report = finalize(state)["final_report"]  # type: ignore[arg-type]
    assert isinstance(report, str)
    return report


def test_a_report_in_content_blocks_is_published_as_its_text() -> None:
    blocks: list[str | dict[str, Any]] = [
        {"type": "reasoning", "reasoning": "thinking"},
        {"type": "text", "text": f"# Report\n\nClaim [a]({PAGE})."},
    ]
    report = published(AIMessage(content=blocks, id="draft"))
    assert report.startswith(f"# Report\n\nClaim [a]({PAGE}).\n\n## Sources")
    assert "'type'" not in report and "thinking" not in report


def test_a_line_of_no_break_spaces_does_not_stop_the_report() -> None:
    report = published(
        AIMessage(f"## Findings\n\n\u00a0\nClaim [a]({PAGE}), [b](https://x.example).")
    )
    assert f"Claim [a]({PAGE}), b." in report


def test_research_gaps_show_errors_and_topics_without_links() -> None:
    failures = [
        ResearchFailure(
            topic="[costs](https://fake.example/t)",
            error="Cannot reach the model server at http://127.0.0.1:9/v1 (`connect` failed)",
        )
    ]
    report = published(AIMessage(f"Claim [a]({PAGE})."), failures)
    assert hrefs(report) == [PAGE, PAGE]  # the claim's link and the Sources entry
    assert (
        "- `[costs](https://fake.example/t)`: "
        "``Cannot reach the model server at http://127.0.0.1:9/v1 (`connect` failed)``"
    ) in report


@pytest.mark.parametrize(
    ("draft", "status"),
    [
        (f"# Report\n\nHeat pumps keep a COP of 2 [Real]({PAGE}).", "complete"),
        ("# Report\n\nHeat pumps keep a COP of 2 [a](https://never.example/x).", "unverified"),
        (
            "I could not find sources on this question. Summary: no evidence was retrieved.",
            "no_sources",
        ),
        # An image of a page never retrieved is removed, but it was no claim's citation.
        ("# Report\n\nNothing found. ![chart](https://never.example/c.png)", "no_sources"),
    ],
)
def test_the_output_says_whether_the_report_rests_on_retrieved_pages(
    draft: str, status: str
) -> None:
    # Pages read but not cited would be quoted by the floor (the test below): a report that
    # is not complete is one with nothing read to quote.
    sources = SOURCES if status == "complete" else []
    state: dict[str, Any] = {"messages": [AIMessage(draft)], "sources": sources, "failures": []}
    assert finalize(state)["status"] == status  # type: ignore[arg-type]


def test_a_report_citing_nothing_read_gets_the_passages_read_quoted() -> None:
    from deep_research.citations.quoting import EVIDENCE_HEADING

    draft = "# Report\n\nHeat pumps keep a COP of 2 [a](https://never.example/x)."
    state: dict[str, Any] = {"messages": [AIMessage(draft)], "sources": SOURCES, "failures": []}
    out = finalize(state)  # type: ignore[arg-type]
    assert out["status"] == "complete" and f"## {EVIDENCE_HEADING}" in out["final_report"]
    assert "> Heat pumps keep a COP of 2." in out["final_report"]
    assert out["citation_check"]["fabricated_removed"] == 1, "the model's bad link still goes"


def test_a_report_cut_at_the_completion_limit_says_so() -> None:
    from deep_research.nodes.finalize import CUT_NOTE

    cut = AIMessage("# Report\n\nHeat pumps are", response_metadata={"finish_reason": "length"})
    whole = AIMessage(
        "# Report\n\nHeat pumps are fine.", response_metadata={"finish_reason": "stop"}
    )
    assert CUT_NOTE in finalize({"messages": [cut]})["final_report"]  # type: ignore[typeddict-item]
    assert "Cut short" not in finalize({"messages": [whole]})["final_report"]  # type: ignore[typeddict-item]


def test_a_report_cut_inside_a_code_block_keeps_the_notes_and_sources_after_it() -> None:
    """The reply stops inside a fence (its completion limit): the fence is closed, so the
    cut note, the gaps and the Sources list added after it are headings, not code."""
    cut = AIMessage(
        f"# Report\n\nSee [the page]({PAGE}).\n\n```sh\nsudo apt install heat",
        response_metadata={"finish_reason": "length"},
    )
    failure = ResearchFailure(topic="costs", error="timeout")
    report = published(cut, [failure])
    tokens = parse(report)
    headings = [tokens[n + 1].content for n, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0] == "Report" and len(headings) >= 4, headings  # cut, gaps, sources
    assert "sudo apt install heat\n```\n" in report and PAGE in hrefs(report)


def test_the_headings_code_adds_follow_the_question_s_language() -> None:
    failure = ResearchFailure(topic="Kosten", error="timeout")
    draft = f"# Bericht\n\nWärmepumpen [laufen]({PAGE}).\n\n## Quellen\n\n- [Real]({PAGE})"
    state: dict[str, Any] = {
        "messages": [AIMessage(draft)],
        "sources": SOURCES,
        "failures": [failure],
        "question": "Wie effizient sind Wärmepumpen?",
    }
    report = finalize(state)["final_report"]  # type: ignore[arg-type]
    assert "## Forschungslücken" in report and "## Research gaps" not in report
    assert report.count("## Quellen") == 1, "the model's own list goes, code writes the real one"
    assert "(abgerufen " in report and "## Sources" not in report
    assert hrefs(report) == [PAGE, PAGE]


def test_the_setting_names_the_language_of_the_headings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPORT_LANGUAGE", "zh")
    report = published(AIMessage(f"# Report\n\nClaim [a]({PAGE})."))
    assert "\n## 来源\n" in report and "(检索于 " in report
