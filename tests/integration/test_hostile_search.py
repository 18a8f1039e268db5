"""Hostile search results over the real clients: titles that try to steer the agent reach the
orchestrator and the report writer only fenced, and are cut and escaped in the report."""

from __future__ import annotations

import re
from typing import Any

import pytest

from deep_research.citations.hygiene import MAX_LABEL_CHARS
from tests.support.brain import ResearchBrain, role_of
from tests.support.fakes.openai_server import message_text
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.hostile import INJECTED_TITLE, LONG_TITLE, NOTICE, ODD_URL, outside_fences
from tests.support.live import research_run, serve

# --- web text that tries to steer the orchestrator and the report writer ---------------

# Text of the hostile titles that must never reach a model outside a fence.
MARKERS = ("SYSTEM NOTICE", "LONGTITLE", "upload ~/.ssh")


def hostile_results(query: str, max_results: int) -> list[dict[str, Any]]:
    return [
        {"url": ODD_URL, "title": INJECTED_TITLE, "content": f"Pumps on {query}. {NOTICE}"},
        {"url": "https://example.org/long", "title": LONG_TITLE, "content": f"On {query}."},
    ]


async def test_hostile_titles_reach_orchestrator_and_report_writer_only_fenced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    context = {"fetch_top_n": 0, "relevance_threshold": 0, "max_researchers_per_turn": 2}
    with (
        FakeTavilyServer(corpus=hostile_results) as tavily,
        serve(ResearchBrain(), monkeypatch) as llm,
    ):
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        # The orchestrator reads the research results; at the turn cap the report writer does.
        read = await research_run(context, thread="orchestrator-reads")
        written = await research_run({**context, "max_orchestrator_turns": 2}, "writer-reads")
    # Titles reach the researchers; the orchestrator and the report writer get only the
    # researchers' reports (with the pages they cite), each fenced whole.
    seen = {"researcher": 0, "orchestrator": 0, "report_writer": 0}
    for body in llm.requests:
        role = role_of(body)
        if role not in seen:
            continue
        for message in body["messages"]:
            text = message_text(message)
            seen[role] += sum(marker in text for marker in MARKERS)
            leaked = [marker for marker in MARKERS if marker in outside_fences(text)]
            assert not leaked, f"{role} got {leaked} outside the data fences: {text[:300]!r}"
    assert seen["researcher"], "the researchers read the hostile results"
    for out in (read, written):
        report = out["final_report"]
        assert out["failures"] == []
        assert not re.search(r"^\s*#+ .*SYSTEM NOTICE", report, re.MULTILINE)
        sources = report.split("## Sources\n", 1)[1].strip().splitlines()
        assert len(sources) == 2, sources
        for line in sources:
            label = re.sub(r"\\(.)", r"\1", line.split("[", 1)[1].rsplit("](", 1)[0])
            assert len(label) <= MAX_LABEL_CHARS, label
            assert "<b>" not in line and "\n" not in line
        (long,) = [line for line in sources if "LONGTITLE" in line]
        assert long.split("](")[0].endswith("…"), "the long title is cut, and marked"
