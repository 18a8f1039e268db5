"""mcp/outcome.py: what the tool's result says around the report (warning, cost, thread)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import TextContent

from deep_research.mcp.outcome import cost_note, thread_note, with_cost, with_outcome

USAGE = {
    "calls": 8,
    "tokens_in": 12_345,
    "tokens_out": 678,
    "usd": 0.0187,
    "estimated": 0,
    "by_role": {"search": {"calls": 2, "usd": 0.016}},
}


def test_the_result_says_what_the_research_cost_after_the_report() -> None:
    note = "Cost of this research: $0.0187 (8 model calls, 12,345 tokens in, 678 out; 2 searches)."
    assert with_cost("# Report", {"usage": USAGE}) == f"# Report\n\n---\n{note}"
    text, attached = with_cost([TextContent(type="text", text="# R"), "file"], {"usage": USAGE})
    assert text.text.endswith(note) and attached == "file", "the file is left as made"
    unknown = cost_note({"usage": {**USAGE, "usd": None}})
    assert "unknown (a model's price is not known)" in unknown and "$0.0000" not in unknown
    assert cost_note({}) == "", "an older thread without usage: nothing claimed"


def test_the_cost_marks_tokens_estimated_for_replies_without_usage() -> None:
    note = cost_note({"usage": {**USAGE, "estimated": 3}})
    assert "(8 model calls, ~12,345 tokens in, ~678 out, 3 calls' tokens estimated; 2" in note


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"searches_used": 0}, "No search was sent: the server's model made no usable research"),
        ({"searches_used": 3}, "The 3 searches sent found nothing worth keeping: try a wider"),
        (
            {"searches_used": 1, "sources": [{"url": "https://a.example/p"}]},
            "The research read 1 page, but the report cites none of them.",
        ),
    ],
)
def test_an_unsourced_report_names_its_real_cause(values: dict[str, Any], says: str) -> None:
    text = with_outcome("# R", {"status": "no_sources", **values})
    assert text.startswith(f"Not a finished report: it cites no source. {says}"), text
    if values["searches_used"] == 0:
        assert "search_provider" not in text, "never the search provider for a model's failure"


def test_an_unsourced_report_the_budget_stopped_names_the_budget_not_the_search() -> None:
    values = {"status": "no_sources", "budget_note": "The run stopped at its cost budget."}
    text = with_outcome("# R", values)
    assert isinstance(text, str)
    assert text.startswith(
        "Not a finished report: it cites no source. The server's cost budget (max_cost_usd, "
        "MAX_COST_USD in its environment) stopped the research before it found a page to cite."
        "\n\n# R"
    )
    assert "search" not in text.split("\n\n")[0].replace("research", "")


def test_the_result_ends_with_its_thread_for_a_follow_up() -> None:
    """The caller needs the thread to ask a follow-up: it comes after the cost (#39)."""
    result = with_cost("# Report", {"usage": {"usd": 0.0, "calls": 1}}, "t-42")
    assert isinstance(result, str) and result.endswith(thread_note("t-42"))
    assert "thread: t-42 (" in result and "follow-up" in thread_note("t-42")
    assert with_cost("# Report", {}) == "# Report", "no thread: nothing added"
