"""The search step as researchers see it: relevance, fetched pages once a run, fences, huge
and unreachable pages, junk queries (the chain's fallbacks: test_search_chain.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.search.relevance import score_results
from deep_research.search.types import SearchResult
from tests.support.fakes.page_server import INJECTION, PageServer
from tests.support.graph_scripts import (
    LINK,
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    run,
    script_for,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import PAGES_HOST, ScriptedSearch, researcher_views

FENCE = re.compile(r"<<<data ([0-9a-f]{12})>>>")


class PagesSearch(ScriptedSearch):
    """Every query finds two pages that all researchers share, and one of its own."""

    def __init__(self, port: int, shared: tuple[str, ...] = ("shared-a", "shared-b")) -> None:
        super().__init__()
        self.base = f"http://{PAGES_HOST}:{port}"
        self.shared = shared

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        await super().search(query, max_results)  # logging and the in-flight barrier
        own = "-".join(query.lower().split())
        paths = [f"/article/{slug}" for slug in (*self.shared, own)]
        return [
            SearchResult(f"{self.base}{path}", f"{query}: {path}", f"Figures on {query}.")
            for path in paths
        ]


def install(monkeypatch: pytest.MonkeyPatch, provider: Any) -> None:
    monkeypatch.setattr("deep_research.search.step.make_provider", lambda name: provider)


async def test_each_url_is_fetched_once_per_run_across_parallel_researchers(
    use_script: Callable[..., ScriptedChatModel],
    pages: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    search = PagesSearch(pages.port)
    search.hold_until(in_flight=3, timeout=10)  # all three search, then fetch, at once
    install(monkeypatch, search)
    use_script(script_for(orchestrator_fanning_out("alpha topic", "beta topic", "gamma topic")))
    out = await run({**NO_CLARIFY, "max_researchers_per_turn": 3, "fetch_top_n": 3})
    assert search.max_in_flight == 3
    fetched = [path for path in pages.requests if path.startswith("/article/")]
    assert sorted(fetched) == sorted(set(fetched)), "no page was fetched twice"
    assert {"/article/shared-a", "/article/shared-b"} <= set(fetched)
    assert len(fetched) == 5  # two shared pages + one own page per researcher
    shared = next(s for s in out["sources"] if s["url"].endswith("/shared-a"))
    assert "Figures on" in shared["content"], "the snippet is kept"
    assert "measured a 13 percent change in shared a" in shared["content"], "and the page text"


def orchestrator_one_by_one(*topics: str) -> Callable[[list[BaseMessage]], AIMessage]:
    """An orchestrator that sends one topic per turn, each after the last one came back."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        done = [m for m in messages if isinstance(m, ToolMessage)]
        if len(done) < len(topics):
            topic = topics[len(done)]
            return AIMessage("", tool_calls=[call("research", {"topic": topic}, f"r{len(done)}")])
        links = LINK.findall("\n".join(str(m.content) for m in done))
        return AIMessage("# Report\n\n" + " ".join(f"[c]({u})" for u in links))

    return reply


async def test_same_query_is_searched_once_and_only_real_searches_count(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
) -> None:
    model = use_script(script_for(orchestrator_one_by_one("same topic", "Same  TOPIC")))
    # A budget of one search: the second researcher is served only if cache hits are free.
    # It is sent after the first has finished: a researcher without a share that looks before
    # its sibling's search has started finds nothing to share, and is refused.
    await run({**NO_CLARIFY, "fetch_top_n": 0, "max_searches_per_run": 1})
    assert scripted_search.queries == ["same topic q0"]
    views = [str(m.content) for m in researcher_views(model)]
    assert sum("Already searched in this run" in text for text in views) == 1
    assert not any("Search cap reached" in text for text in views)
    assert all("Finding 0 about same topic q0." in text for text in views)


async def test_researcher_sees_page_text_fenced_by_a_fresh_nonce_without_hidden_text(
    use_script: Callable[..., ScriptedChatModel],
    pages: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(monkeypatch, PagesSearch(pages.port, shared=()))
    monkeypatch.setattr(PagesSearch, "search", _hidden_page_search)
    model = use_script(script_for(orchestrator_fanning_out("topic one", "topic two")))
    await run({**NO_CLARIFY, "fetch_top_n": 1})
    views = [str(m.content) for m in researcher_views(model)]
    assert len(views) == 2
    nonces = set()
    for text in views:
        opened = FENCE.findall(text)
        assert opened and all(f"<<<end data {n}>>>" in text for n in opened)
        nonces.update(opened)
        assert "measured a 12 percent change in hidden injection test" in text
        assert INJECTION not in text and "IGNORE ALL PREVIOUS" not in text
        assert "<<<end data 0000>>>" not in text and "‹‹‹end data 0000›››" in text
    assert len(nonces) == 2, "each tool call gets its own nonce"


async def _hidden_page_search(self: PagesSearch, query: str, n: int) -> list[SearchResult]:
    return [SearchResult(f"{self.base}/hidden", f"{query}: hidden", f"About {query}.")]


async def test_one_huge_page_cannot_flood_the_researcher(
    use_script: Callable[..., ScriptedChatModel],
    pages: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    search = PagesSearch(pages.port, shared=())

    async def huge(query: str, n: int) -> list[SearchResult]:
        base = search.base
        return [
            SearchResult(f"{base}/huge", f"{query}: huge", "Snippet."),
            SearchResult(f"{base}/article/other", f"{query}: other", "Snippet two."),
        ]

    monkeypatch.setattr(search, "search", huge)
    install(monkeypatch, search)
    model = use_script(script_for(orchestrator_fanning_out("huge page topic")))
    context = {"max_page_chars": 1500, "max_chars_per_turn": 2500, "relevance_threshold": 0}
    out = await run({**NO_CLARIFY, **context})
    (view,) = researcher_views(model)
    assert len(str(view.content)) <= 2500
    assert "measured a 11 percent change in other" in str(view.content), "both pages fit"
    huge_source = next(s for s in out["sources"] if s["url"].endswith("/huge"))
    assert len(huge_source["content"]) <= len("Snippet.\n\n") + 1500


async def test_unreachable_pages_are_reported_and_their_snippets_kept(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(orchestrator_fanning_out("offline topic")))
    out = await run({**NO_CLARIFY, "fetch_top_n": 1})
    (view,) = researcher_views(model)
    assert "page not read (ConnectError); search snippet instead" in str(view.content)
    assert "Finding 0 about offline topic q0." in str(view.content)
    assert view.artifact["skipped_pages"][0]["url"].startswith("https://example.org/")
    assert out["failures"] == []


async def test_minilm_relevance_is_one_zero_to_one_scale() -> None:
    results = [
        SearchResult(
            "https://a.example/1",
            "Cold-climate heat pumps",
            "Field trials show a COP of 2 at -15 C.",
        ),
        SearchResult("https://a.example/2", "Chocolate cake recipe", "Mix flour, sugar and cocoa."),
        SearchResult("https://a.example/3", "Premier League results", "Arsenal beat Chelsea 2-1."),
    ]
    scores = await score_results("heat pump efficiency in cold climates", results)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] > 0.5 and max(scores[1:]) < 0.1


def test_sources_keep_every_text_retrieved_for_a_url() -> None:
    from deep_research.state import Source, merge_sources

    snippet = Source(url="u", title="T", content="Snippet.", found_by="a")
    read = Source(url="u", title="T", content="Snippet.\n\nFull page text.", found_by="b")
    other = Source(url="v", title="V", content="Other.", found_by="b")
    merged = merge_sources([snippet], [read, other, snippet])
    assert [s["url"] for s in merged] == ["u", "v"]
    assert "Full page text." in merged[0]["content"] and merged[0]["found_by"] == "a"


class SlashSearch(ScriptedSearch):
    """Finds one article under two spellings of its URL: with and without a trailing slash."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.base = f"http://{PAGES_HOST}:{port}/article/same-page"

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        await super().search(query, max_results)
        return [
            SearchResult(self.base, "without slash", f"Figures on {query}."),
            SearchResult(f"{self.base}/", "with slash", f"Other figures on {query}."),
        ]


async def test_a_url_with_and_without_its_trailing_slash_is_one_page_fetched_once(
    use_script: Callable[..., ScriptedChatModel],
    pages: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(monkeypatch, SlashSearch(pages.port))
    use_script(script_for(orchestrator_fanning_out("alpha topic")))
    out = await run({**NO_CLARIFY, "fetch_top_n": 2, "relevance_threshold": 0})
    fetched = [path for path in pages.requests if path.startswith("/article/")]
    assert len(fetched) == 1, fetched
    [source] = [s for s in out["sources"] if "same-page" in s["url"]]
    assert "Figures on" in source["content"] and "Other figures on" in source["content"]


def researcher_asking(*queries: str) -> Callable[[list[BaseMessage]], AIMessage]:
    """A researcher that searches `queries` once, then reports every link it was given."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return AIMessage("", tool_calls=[call("web_search", {"queries": list(queries)}, "s1")])
        links = LINK.findall(str(results[-1].content))
        return AIMessage("Findings: " + " ".join(f"[claim]({u})" for u in links))

    return reply


async def run_counted(context: dict[str, Any]) -> int:
    """Run the graph to its end; the searches its state counted against the cap."""
    graph = builder.compile(checkpointer=InMemorySaver())
    question = {"messages": [{"role": "user", "content": "Heat pumps in cold climates?"}]}
    config: RunnableConfig = {"configurable": {"thread_id": "counted"}}
    await graph.ainvoke(question, config, context=context)
    return int((await graph.aget_state(config)).values["searches_used"])


async def test_junk_queries_are_not_sent_nor_counted_and_the_researcher_is_told_why(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
) -> None:
    junk = ("", "query1", "&lt;query&gt;", "...")
    model = use_script(script_for(orchestrator_fanning_out("heat pumps"), researcher_asking(*junk)))
    counted = await run_counted({**NO_CLARIFY, "fetch_top_n": 0, "max_searches_per_run": 6})
    # No junk query reached the search provider, nor was counted: the researcher's floor
    # searched its topic instead, in the same step (researcher/floor.py).
    assert scripted_search.queries == ["heat pumps"]
    assert counted == 1
    [view] = [
        str(m.content)
        for messages, tools in model.calls
        if "web_search" in tools
        for m in messages
        if isinstance(m, ToolMessage) and m.tool_call_id == "s1"
    ][:1]
    assert view.count("Not searched: ") == len(junk)
    last = str(researcher_views(model)[0].content)
    assert "(5 searches left on this topic.)" in last, "only the floor's search counted"


async def test_entity_soup_is_sent_as_the_cleaned_text(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
) -> None:
    soup = "&lt;b&gt;heat pumps&lt;/b&gt;&#32;cold&nbsp;climate"
    model = use_script(script_for(orchestrator_fanning_out("heat pumps"), researcher_asking(soup)))
    counted = await run_counted({**NO_CLARIFY, "fetch_top_n": 0, "max_searches_per_run": 6})
    assert scripted_search.queries == ["heat pumps cold climate"]
    assert counted == 1
    assert '## "heat pumps cold climate"' in str(researcher_views(model)[0].content)
