"""A whole run over a page whose text only its script writes: with RENDER_PAGES the
researcher reads it and the report's quote of it survives the citation check; without, the
researcher has its snippet alone and the quote is dropped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from deep_research.citations import TextDirective, fragment_of
from deep_research.search.types import SearchResult
from tests.support.fakes.page_server import PageServer, scripted_paragraphs
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    run,
    script_for,
    tool_results,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import PAGES_HOST

PASSAGE = scripted_paragraphs("heat-pumps")[2]
QUOTE = TextDirective(" ".join(PASSAGE.split()[:6]), " ".join(PASSAGE.split()[-4:]))


class AppSearch:
    name, max_concurrency = "scripted", 4

    def __init__(self, port: int) -> None:
        self.url = f"http://{PAGES_HOST}:{port}/scripted/heat-pumps"

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        return [SearchResult(self.url, "Heat pumps app", "An app about heat pumps.")]


def quoting_researcher(url: str) -> Callable[[list[BaseMessage]], AIMessage]:
    """Search once, then quote the passage on `url` by a text fragment."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        if not tool_results(messages):
            return AIMessage("", tool_calls=[call("web_search", {"queries": ["heat pumps"]}, "s")])
        return AIMessage(f"Installations grew [survey]({url}#{fragment_of([QUOTE])}).")

    return reply


async def research(
    pages: PageServer, monkeypatch: pytest.MonkeyPatch, use_script: Any, thread: str
) -> tuple[dict[str, Any], ScriptedChatModel]:
    search = AppSearch(pages.port)
    monkeypatch.setattr("deep_research.search.step.make_provider", lambda name: search)
    script = script_for(orchestrator_fanning_out("heat pumps"), quoting_researcher(search.url))
    model = use_script(script)
    context = {**NO_CLARIFY, "fetch_top_n": 1, "relevance_filter": False, "use_memory": False}
    return await run(context | {"search_library": False}, thread=thread), model


@pytest.mark.slow
async def test_a_page_only_a_browser_shows_is_read_and_cited_only_with_render_pages(
    use_script: Any, pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RENDER_PAGES", raising=False)
    plain, _ = await research(pages, monkeypatch, use_script, "plain")
    assert not any(PASSAGE in s["content"] for s in plain["sources"])
    assert ":~:text=" not in plain["final_report"], "a quote of text never read is dropped"

    monkeypatch.setenv("RENDER_PAGES", "true")
    rendered, model = await research(pages, monkeypatch, use_script, "rendered")
    (source,) = [s for s in rendered["sources"] if PASSAGE in s["content"]]
    assert source["url"].endswith("/scripted/heat-pumps")
    seen = [str(m.content) for messages, _ in model.calls for m in tool_results(messages)]
    assert any(PASSAGE in text for text in seen), "the researcher read the rendered text"
    # Kept (the check may shorten a fragment to the words that find the passage).
    assert "/scripted/heat-pumps#:~:text=Scripted%20paragraph%203" in rendered["final_report"]
