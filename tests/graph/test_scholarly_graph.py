"""A whole run on a paper question with search_provider=arxiv: the real ChatOpenAI against the
scripted model server, the real arXiv provider against a fake arXiv API speaking Atom."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.search.fetch import Page, PageFetcher
from tests.support.brain import ResearchBrain, _texts
from tests.support.fakes.openai_server import Reply
from tests.support.fakes.scholarly_servers import FakeArxivServer, FakeWikipediaServer, Paper
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import QUESTION, cited, serve

PAPER = Paper(
    "2101.00001v2",
    "Attention-based control of heat pumps in cold climates",
    "We show that attention-based controllers raise the seasonal efficiency of air-source\n"
    "  heat pumps by 12% in cold climates.",
    authors=["Grace Hopper", "Alan Turing"],
)
ABS_PAGE = "https://arxiv.org/abs/2101.00001v2"


async def test_a_paper_question_searched_on_arxiv_cites_the_paper_s_abs_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fetched: list[str] = []

    async def fetch(self: PageFetcher, url: str) -> Page:
        fetched.append(url)
        return Page(url, skipped="not in this test")

    monkeypatch.setattr(PageFetcher, "fetch", fetch)
    brain = ResearchBrain(topics=["attention-based heat pump control"])
    with FakeArxivServer([PAPER]) as arxiv, serve(brain, monkeypatch):
        monkeypatch.setenv("ARXIV_API_URL", arxiv.api_url)
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "paper"}}
        context = {"allow_clarification": False, "search_provider": "arxiv"}
        await graph.ainvoke(QUESTION, config, context=context)
        state = (await graph.aget_state(config)).values
        sent = arxiv.requests
    assert len(sent) == 1 and state["searches_used"] == 1, "one search, counted once"
    words = ("attention-based", "heat", "pump", "control", "0")
    assert sent[0]["search_query"] == " AND ".join(f"all:{word}" for word in words)
    # The abs page is not fetched (the abstract is its text); the paper's PDF is, in its
    # place, then its HTML rendering in the PDF's; when neither can be read the abstract
    # stays, alone.
    assert fetched == ["https://arxiv.org/pdf/2101.00001v2", "https://arxiv.org/html/2101.00001v2"]
    assert ABS_PAGE in cited(state["final_report"])
    (source,) = [s for s in state["sources"] if s["url"] == ABS_PAGE]
    assert source["content"] == " ".join(PAPER.summary.split()), "the abstract, not a fetched page"


class SourcePickingBrain(ResearchBrain):
    """Its researchers name a source in their search call, as the tool's enum offers."""

    def __init__(self, source: str, **more: object) -> None:
        super().__init__(topics=["attention-based heat pump control"])
        self.source = source
        self.more = more  # other arguments each search call gives (a range of years)

    async def _research(self, body: dict[str, Any]) -> Reply:
        reply = await super()._research(body)
        for call in reply.tool_calls:
            assert isinstance(call.arguments, dict)
            call.arguments["source"] = self.source
            call.arguments.update(self.more)
        return reply


async def _picking_run(
    brain: SourcePickingBrain, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], list[dict[str, str]], list[dict[str, str]], str]:
    """One run with Wikipedia the default and arXiv its fallback: the final state, the
    requests each fake API had, and every model request as JSON."""
    with (
        FakeArxivServer([PAPER]) as arxiv,
        FakeWikipediaServer([]) as wiki,
        serve(brain, monkeypatch) as llm,
    ):
        monkeypatch.setenv("ARXIV_API_URL", arxiv.api_url)
        monkeypatch.setenv("WIKIPEDIA_API_URL", wiki.api_url)
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "picking"}}
        context = {
            "allow_clarification": False,
            "search_provider": "wikipedia",
            "search_fallback": "arxiv",
        }
        await graph.ainvoke(QUESTION, config, context=context)
        state = (await graph.aget_state(config)).values
        return state, list(arxiv.requests), list(wiki.requests), json.dumps(llm.requests)


@pytest.mark.parametrize("source", ["arxiv", "pubmed"])
async def test_a_researcher_sends_a_search_to_the_source_it_names_among_the_enabled(
    monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    """Default wikipedia, arxiv enabled as a fallback: a call naming arxiv goes to arXiv
    first; one naming a source that is not enabled goes to the default, and is told so."""
    state, arxiv, wiki, bodies = await _picking_run(SourcePickingBrain(source), monkeypatch)
    asked = (len(arxiv), len(wiki))
    assert state["searches_used"] == 1 and ABS_PAGE in cited(state["final_report"])
    if source == "arxiv":
        assert asked == (1, 0), "the named source first: Wikipedia never asked"
    else:
        assert asked == (1, 1), "the default first (it found nothing), then the fallback"
        assert "That source is not enabled" in bodies
    assert '"enum": ["wikipedia", "arxiv"]' in bodies, "the tool offered the enabled sources"


@pytest.mark.parametrize(
    ("years", "clause"),
    [
        ({"from_year": 2019, "to_year": 2023}, " AND submittedDate:[201901010000 TO 202312312359]"),
        ({"from_year": "2019] OR all:x", "to_year": 2023}, ""),
        ({}, ""),
    ],
)
async def test_a_researcher_limits_a_search_to_the_years_it_names_where_the_source_can(
    monkeypatch: pytest.MonkeyPatch, years: dict[str, object], clause: str
) -> None:
    """The tool offers the years (arXiv can limit to them); a call giving them sends arXiv
    the submitted-date clause; years that are not a usable range are dropped, and the
    researcher told so in fixed words; a call giving none searches as before."""
    brain = SourcePickingBrain("arxiv", **years)
    state, arxiv, _, bodies = await _picking_run(brain, monkeypatch)
    sent = [request["search_query"] for request in arxiv]
    words = ("attention-based", "heat", "pump", "control", "0")
    assert sent == [" AND ".join(f"all:{word}" for word in words) + clause]
    assert state["searches_used"] == 1 and ABS_PAGE in cited(state["final_report"])
    assert '"from_year"' in bodies and '"to_year"' in bodies, "the tool offered the years"
    dropped = "The years given are not a usable range" in bodies
    assert dropped == (bool(years) and not clause)
    assert "OR all:x" not in "".join(sent)


class OfferedSourceBrain(ResearchBrain):
    """Its orchestrator marks the paper topic scholarly where `research` asks (as a model
    would), and the other not; its researchers name arXiv in every search, offered or not
    (as a model that saw it elsewhere in the run might)."""

    def __init__(self) -> None:
        super().__init__(topics=["attention-based heat pump control", "heat pump prices"])
        self.offered: dict[str, list[str]] = {}  # topic -> the sources its tool offered
        self.asked: list[bool] = []  # whether each planning call's `research` asked

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        reply = super()._orchestrate(body)
        tool = next(t for t in body["tools"] if t["function"]["name"] == "research")
        asks = "scholarly" in tool["function"]["parameters"]["properties"]
        self.asked.append(asks)
        for call in reply.tool_calls:
            if asks and isinstance(call.arguments, dict) and "control" in call.arguments["topic"]:
                call.arguments["scholarly"] = True
        return reply

    async def _research(self, body: dict[str, Any]) -> Reply:
        reply = await super()._research(body)
        tool = next(t for t in body.get("tools", []) if t["function"]["name"] == "web_search")
        source = tool["function"]["parameters"]["properties"].get("source", {})
        enum = source.get("enum", [])
        self.offered.setdefault(_texts(body, "user")[0], enum)
        for call in reply.tool_calls:
            if isinstance(call.arguments, dict):
                call.arguments["source"] = "arxiv"
        return reply


@pytest.mark.parametrize("scholarly", [True, False])
async def test_by_default_a_paper_topic_can_go_to_arxiv_without_the_user_naming_it(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer, scholarly: bool
) -> None:
    """`search_provider=auto` (the default) lets the orchestrator mark a topic scholarly:
    that topic's researcher is offered the keyless scholarly sources beside the web, names
    arXiv, and the report cites the paper's page; a topic not marked is offered the web
    alone, its tool as short as before there were sources (docs/speed.md), and its search
    naming arXiv anyway goes to the web, told so. `scholarly_sources=false`: `research` does
    not ask, and no researcher is offered them or reaches them."""

    async def fetch(self: PageFetcher, url: str) -> Page:
        return Page(url, skipped="not in this test")

    monkeypatch.setattr(PageFetcher, "fetch", fetch)
    brain = OfferedSourceBrain()
    with FakeArxivServer([PAPER]) as arxiv, serve(brain, monkeypatch) as llm:
        monkeypatch.setenv("ARXIV_API_URL", arxiv.api_url)
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "auto"}}
        context = {"allow_clarification": False, "scholarly_sources": scholarly}
        await graph.ainvoke(QUESTION, config, context=context)
        state = (await graph.aget_state(config)).values
        sent = list(arxiv.requests)
        bodies = json.dumps(llm.requests)
    paper, prices = (brain.offered[topic] for topic in brain.topics)
    assert set(brain.asked) == {scholarly}
    assert prices == [], "a topic not marked scholarly: the web alone"
    assert state["searches_used"] == 2
    refused = bodies.count("That source is not enabled")
    if scholarly:
        assert paper[1:] == ["arxiv", "europepmc", "openalex", "wikipedia"]
        assert len(sent) == 1 and tavily.queries == ["heat pump prices 0"], "each at its own"
        assert refused == 1, "the prices topic's arXiv search went to the web, told so"
        assert ABS_PAGE in cited(state["final_report"])
    else:
        assert paper == [] and sent == [] and len(tavily.requests) == 2
        assert refused == 2
        assert ABS_PAGE not in cited(state["final_report"])
