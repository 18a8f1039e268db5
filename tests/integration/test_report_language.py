"""The report follows the reader end to end: real ChatOpenAI and Tavily client over
127.0.0.1, a scripted model that writes in the language (and at the length) its prompt asks."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.brain import LINK, role_of
from tests.support.citing_brain import QUOTE
from tests.support.fakes.openai_server import ScriptedOpenAIServer, system_text
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.polyglot_brain import PolyglotBrain

GERMAN = "Wie effizient sind Wärmepumpen bei großer Kälte?"
CHINESE = "热泵在寒冷气候下的效率如何？"


async def run(
    monkeypatch: pytest.MonkeyPatch, question: str, **context: Any
) -> tuple[dict[str, Any], PolyglotBrain, list[dict[str, Any]]]:
    brain = PolyglotBrain()
    with ScriptedOpenAIServer(brain) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("LLM_MODEL", "test-model")
        graph = builder.compile(checkpointer=InMemorySaver())
        out = await graph.ainvoke(
            {"messages": [{"role": "user", "content": question}]},
            {"configurable": {"thread_id": "lang"}},
            context={"allow_clarification": False, **context},
        )
        return out, brain, llm.requests


@pytest.mark.parametrize(
    ("question", "language", "title", "sources", "retrieved"),
    [
        (GERMAN, "German", "# Wärmepumpen bei Kälte", "## Quellen", "abgerufen"),
        (CHINESE, "Chinese", "# 寒冷气候中的热泵", "## 来源", "检索于"),
    ],
)
async def test_a_question_s_report_is_in_its_language_and_still_checked(
    monkeypatch: pytest.MonkeyPatch,
    tavily: FakeTavilyServer,
    question: str,
    language: str,
    title: str,
    sources: str,
    retrieved: str,
) -> None:
    out, brain, requests = await run(monkeypatch, question)
    assert brain.asked == [language], "the writer was told the question's language"
    report, check = out["final_report"], out["citation_check"]
    assert report.startswith(title) and report.count(sources) == 1 and f"({retrieved} " in report
    assert "## Sources" not in report and "retrieved" not in report
    # The citations are checked as in English: the invented link goes, the cited pages are
    # the search API's, and the text fragments are the pages' own (English) words.
    assert brain.fabricated_url not in report and check["fabricated_removed"] == 1
    cited = [url.split("#")[0] for url in LINK.findall(report)]
    assert cited and set(cited) <= tavily.returned_urls
    assert f"#:~:text={quote(QUOTE)}" in report and check["fragments_kept"] >= 2
    writer = [r for r in requests if role_of(r) == "orchestrator"][-1]
    assert f"in {language}, the language of the user's question" in system_text(writer)


async def test_the_setting_overrides_the_question_s_language(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    out, brain, _ = await run(monkeypatch, GERMAN, report_language="zh")
    assert brain.asked == ["Chinese"] and "## 来源" in out["final_report"]


def words(report: str) -> int:
    body = report.split("\n## Sources")[0]
    return len(re.findall(r"\w+", LINK.sub("", body)))


async def test_brief_and_detailed_reach_the_writer_and_its_completion_limit(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    lengths = {}
    for length in ("brief", "detailed"):
        monkeypatch.setenv("LLM_MAX_TOKENS", "6000")
        out, _, requests = await run(monkeypatch, "How do heat pumps work?", report_length=length)
        writer = [r for r in requests if role_of(r) == "orchestrator"][-1]
        # The planning turn wrote it (no tool calls): `brief` never lowers a planning call's
        # limit (the report turn's is, tests/unit/nodes/test_orchestrator_limits.py);
        # `detailed` raises it as far as an explicit LLM_MAX_TOKENS allows.
        limit = 4096 if length == "brief" else 6000
        assert writer["max_completion_tokens"] == limit and writer["max_tokens"] == limit
        lengths[length] = words(out["final_report"])
    assert 150 <= lengths["brief"] <= 400 + 40 < 1_500 <= lengths["detailed"] <= 3_000 + 40
