"""The report written as sections in parallel (`report_in_sections`), through the real
ChatOpenAI against the scripted server and the real Tavily client against its fake API."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research import embedding
from deep_research.errors import DeepResearchError
from deep_research.graph import builder
from deep_research.memory import chunks, preparing, research
from tests.support.brain import INVENTED
from tests.support.fakes.openai_server import InFlightBarrier, message_text
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import QUESTION, cited, research_run, serve
from tests.support.sections_brain import TITLE, TOPICS, SectionsBrain

SECTIONS = {"report_in_sections": "on"}


def _system(body: dict[str, Any]) -> str:
    return "\n".join(message_text(m) for m in body["messages"] if m.get("role") == "system")


def _user(body: dict[str, Any]) -> str:
    return "\n".join(message_text(m) for m in body["messages"] if m.get("role") == "user")


async def _run(
    brain: SectionsBrain, monkeypatch: pytest.MonkeyPatch, context: dict[str, Any]
) -> dict[str, Any]:
    with serve(brain, monkeypatch):
        return await research_run({"max_researchers_per_turn": 3, **context})


async def test_three_sections_and_the_frame_are_written_at_once_and_stitched_into_one_report(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SectionsBrain(gather=InFlightBarrier(k=4, timeout=5))
    out = await _run(brain, monkeypatch, SECTIONS)
    # All four calls arrived before any ended: they were in flight together.
    arrived = [i for i, (what, _) in enumerate(brain.events) if what == "arrived"]
    ended = [i for i, (what, _) in enumerate(brain.events) if what == "ended"]
    assert len(arrived) == 4 and max(arrived) < min(ended), brain.events
    assert "report_writer" not in brain.bodies
    assert len(brain.bodies["orchestrator"]) == 2, "todos, dispatch: no third, report, call"
    report = out["final_report"]
    assert report.startswith(f"# {TITLE}\n\nThe opening paragraph.")
    places = [report.index(f"## About {topic}") for topic in TOPICS]
    assert places == sorted(places), "the sections in the plan's order"
    assert places[-1] < report.index("## Conclusion") < report.index("## Sources")
    assert report.count("## Sources") == 1
    urls = cited(report)
    assert urls and urls <= tavily.returned_urls
    assert all(any(slug in url for url in urls) for slug in ("efficiency", "costs", "noise"))
    assert out["citation_check"]["fabricated_removed"] == 0


async def test_each_part_is_embedded_for_memory_as_it_is_written_as_the_report_holds_it(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    """Each section, and the frame, is embedded as soon as it is written, as the published
    (stitched, checked) report holds it: `remember` computes no piece of the report."""
    model = embedding.embedder()
    monkeypatch.setattr(model, "_cache", OrderedDict())  # no other test's vectors
    computed: list[str] = []
    real_compute = model._compute
    monkeypatch.setattr(
        model, "_compute", lambda texts: computed.extend(texts) or real_compute(texts)
    )
    parts: list[str] = []
    by_finalize: list[str] = []  # what embedding the stitched report at `finalize` computed
    real_part = preparing._prepare_part

    def prepare_part(text: str, question: str) -> None:
        parts.append(text)
        if not (text.startswith(f"# {TITLE}") and "\n## About " in text):
            return real_part(text, question)  # a section or the frame, as it is written
        for thread in threading.enumerate():  # the parts' own, first
            if thread.name == "memory-prepare" and thread is not threading.current_thread():
                thread.join(120)
        start = len(computed)
        real_part(text, question)
        by_finalize.extend(computed[start:])
        return None

    monkeypatch.setattr(preparing, "_prepare_part", prepare_part)
    remembered_from: list[int] = []
    real_remember = research.remember

    async def remember_once_the_parts_are_in(*args: Any, **kwargs: Any) -> int:
        def join() -> None:
            for thread in threading.enumerate():
                if thread.name == "memory-prepare":
                    thread.join(120)

        await asyncio.to_thread(join)
        remembered_from.append(len(computed))
        return await real_remember(*args, **kwargs)

    monkeypatch.setattr(research, "remember", remember_once_the_parts_are_in)

    out = await _run(SectionsBrain(), monkeypatch, {**SECTIONS, "use_memory": True})

    # Three sections and the frame as they came; then, at `finalize`, the stitched report,
    # every piece of it already computed from the parts.
    assert len(parts) == 5 and parts[-1].startswith(f"# {TITLE}"), parts
    pieces = chunks.report_chunks(out["final_report"])
    assert len(pieces) >= 5, pieces  # the title and opening, each section, the conclusion
    (start,) = remembered_from
    assert set(pieces) <= set(computed[:start])
    assert not set(pieces) & set(computed[start:]), "remember computed none of them again"
    assert not set(pieces) & set(by_finalize), "nor did finalize: the parts had them all"
    # The question, the stored report's first piece, came with the first part written:
    # `finalize` and `remember` compute nothing once the last section is in.
    asked = QUESTION["messages"][0]["content"]
    assert computed.count(asked) == 1 and computed.index(asked) < start
    assert not by_finalize and not computed[start:], (by_finalize, computed[start:])


async def test_by_default_a_plain_question_on_three_topics_is_written_in_sections(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SectionsBrain()
    out = await _run(brain, monkeypatch, {})
    assert len(brain.bodies["report_section"]) == 3 and len(brain.bodies["report_frame"]) == 1
    assert len(brain.bodies["orchestrator"]) == 2, "no third, report, call"
    assert out["final_report"].startswith(f"# {TITLE}")
    assert cited(out["final_report"]) <= tavily.returned_urls


async def test_each_section_reads_only_its_own_findings_and_the_frame_only_digests(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SectionsBrain()
    await _run(brain, monkeypatch, SECTIONS)
    for body in brain.bodies["report_section"]:
        user = _user(body)
        own = [t for t in TOPICS if f"Findings on {t}" in user]
        assert len(own) == 1, "one researcher's findings a section"
    (frame,) = brain.bodies["report_frame"]
    assert "](http" not in _user(frame), "digests carry no links"
    assert all(f"Topic: {topic}" in _user(frame) for topic in TOPICS)


async def test_a_bad_citation_in_one_section_is_removed_as_in_any_report(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SectionsBrain(invents=TOPICS[1])
    out = await _run(brain, monkeypatch, SECTIONS)
    assert INVENTED not in out["final_report"]
    assert "And an invented study." in out["final_report"]
    assert out["citation_check"]["fabricated_removed"] == 1
    assert out["citation_check"]["removed_urls"] == [INVENTED]


async def test_the_language_wish_reaches_every_section_and_the_frame(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SectionsBrain()
    await _run(brain, monkeypatch, {**SECTIONS, "report_language": "de"})
    bodies = brain.bodies["report_section"] + brain.bodies["report_frame"]
    assert len(bodies) == 4
    assert all("in German (the reader's setting)" in _system(body) for body in bodies)


async def test_a_run_stopped_by_one_section_resumes_without_asking_the_others_again(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = SectionsBrain(fails_once=TOPICS[2])
    config = {"configurable": {"thread_id": "stopped"}}
    context = {"allow_clarification": False, "max_researchers_per_turn": 3, **SECTIONS}
    graph = builder.compile(checkpointer=InMemorySaver())
    with serve(brain, monkeypatch):
        with pytest.raises(DeepResearchError, match="scripted outage"):
            await graph.ainvoke(QUESTION, config, context=context, durability="sync")
        assert len(brain.bodies["report_section"]) == 3 and len(brain.bodies["report_frame"]) == 1
        await graph.ainvoke(None, config, context=context, durability="sync")
    state = (await graph.aget_state(config)).values
    asked = [_user(body) for body in brain.bodies["report_section"]]
    assert len(asked) == 4 and TOPICS[2] in asked[-1], "only the failed section is asked again"
    assert len(brain.bodies["report_frame"]) == 1, "the frame's answer was kept"
    assert all(f"## About {topic}" in state["final_report"] for topic in TOPICS)


@pytest.mark.parametrize(
    ("context", "topics", "question"),
    [
        pytest.param({"report_in_sections": "off"}, TOPICS, "", id="off"),
        pytest.param(SECTIONS, TOPICS[:1], "", id="one-researcher"),
        pytest.param({**SECTIONS, "max_cost_usd": 5.0}, TOPICS, "", id="under-a-budget"),
        pytest.param(
            {"report_in_sections": "auto"},
            TOPICS,
            "Compare heat pump efficiency, costs and noise in a table.",
            id="auto-and-a-table",
        ),
    ],
)
async def test_one_call_writes_the_report_where_the_split_does_not_apply(
    monkeypatch: pytest.MonkeyPatch,
    tavily: FakeTavilyServer,
    context: dict[str, Any],
    topics: list[str],
    question: str,
) -> None:
    brain = SectionsBrain(topics=list(topics))
    if question:
        monkeypatch.setattr("tests.support.live.QUESTION", _asking(question))
    out = await _run(brain, monkeypatch, context)
    assert "report_section" not in brain.bodies and "report_frame" not in brain.bodies
    assert len(brain.bodies["orchestrator"]) == 3, "the third call writes the report"
    assert cited(out["final_report"]) <= tavily.returned_urls


async def test_on_splits_even_a_request_for_a_table_which_auto_leaves_whole(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    monkeypatch.setattr(
        "tests.support.live.QUESTION", _asking("Compare heat pump costs in a table.")
    )
    brain = SectionsBrain()
    await _run(brain, monkeypatch, SECTIONS)
    assert len(brain.bodies["report_section"]) == 3


def _asking(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}
