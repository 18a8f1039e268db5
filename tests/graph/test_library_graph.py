"""Research with the library: private-only (`search_provider=library`) and beside the web.

Real Chroma and real MiniLM; the models are scripted. The library's `file:` links are
cited like web pages, and a `file:` link to anything the run did not retrieve from the
library is removed like a fabricated web link.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from deep_research.library import add_paths
from deep_research.memory import PASSAGES_COLLECTION, REPORTS_COLLECTION, open_store
from tests.support.documents import write_pdf
from tests.support.graph_scripts import NO_CLARIFY, call, run, tool_results
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

FILE_LINK = re.compile(r"\]\((file:///[^)\s]+)\)")
WEB_LINK = re.compile(r"\]\((https://[^)\s]+)\)")
WIND = "Wind turbines in Denmark supply more than half of the electricity there."
SOLAR = "Solar panels in Germany produced 60 terawatt hours of electricity in 2023."


async def library_with_a_pdf(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    write_pdf(docs / "energy.pdf", [SOLAR, WIND])
    (docs / "notes.md").write_text("Cats sleep most of the day in sunny spots.\n")
    report = await add_paths(await open_store(), [docs], lambda outcome: None)
    assert report.count("added") == 2
    return docs


def script_citing(outside: str) -> Callable[[list[BaseMessage], set[str]], AIMessage]:
    """The researcher searches once and cites the library passages it was shown, with a
    quote; the orchestrator copies its links and adds `outside`, a file never retrieved."""

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        results = tool_results(messages)
        if "web_search" in tools:
            if not results:
                query = {"queries": ["How much of Denmark's electricity comes from wind?"]}
                return AIMessage("", tool_calls=[call("web_search", query, "s1")])
            text = str(results[-1].content)
            links = FILE_LINK.findall(text)
            cited = " ".join(f'[wind]({url} "more than half of the electricity")' for url in links)
            web = " ".join(f"[web]({url})" for url in WEB_LINK.findall(text))
            return AIMessage(f"Findings: {cited} {web}")
        if "research" in tools:
            if not results:
                return AIMessage("", tool_calls=[call("research", {"topic": "wind"}, "r1")])
            text = str(results[-1].content)
            links = [*FILE_LINK.findall(text), *WEB_LINK.findall(text)]
            body = " ".join(f"[claim]({url})" for url in links)
            return AIMessage(f"# Report\n\nWind {body}. Also [secret]({outside}).\n")
        return AIMessage("Wrap-up.")

    return script


@pytest.mark.slow
async def test_private_research_cites_the_library_at_the_page_and_rejects_other_files(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    tmp_path: Path,
) -> None:
    docs = await library_with_a_pdf(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("A file on disk that was never added to the library.")
    # An earlier web run on the same question leaves web passages in memory.
    use_script(script_citing(secret.as_uri()))
    memory = {**NO_CLARIFY, "use_memory": True}
    earlier = await run({**memory, "search_library": False}, thread="web")
    assert any(source["url"].startswith("https://") for source in earlier["sources"])
    model = use_script(script_citing(secret.as_uri()))
    out = await run({**memory, "search_provider": "library"}, thread="private")
    assert len(scripted_search.queries) == 1  # the private run never searched the web

    page_two = f"{(docs / 'energy.pdf').resolve().as_uri()}#page=2"
    researcher_saw = next(
        str(m.content)
        for messages, tools in model.calls
        if "web_search" in tools
        for m in messages
        if isinstance(m, ToolMessage)
    )
    # The passage reaches the model inside the data fences, like web text.
    assert re.search(
        r"<<<data [0-9a-f]+>>>\nResult 1, passage from your documents:\n\[energy\.pdf, page 2\]",
        researcher_saw,
    )
    report, check = out["final_report"], out["citation_check"]
    assert f"[claim]({page_two})" in report
    assert secret.as_uri() not in report and "Also secret." in report
    assert check["removed_urls"] == [secret.as_uri()]
    assert f"1. [energy.pdf, page 2]({page_two})" in report.split("## Sources")[1]
    # Every source is a library document: memory's web passages were not used either.
    assert all(source["url"].startswith("file:///") for source in out["sources"])
    # Reports are remembered; the library's passages stay the library's alone, so a
    # removed document cannot come back through memory.
    store = await open_store()
    assert len({hit.key for hit in await store.items(REPORTS_COLLECTION)}) == 2
    assert [
        hit for hit in await store.items(PASSAGES_COLLECTION) if "https://" in str(hit.metadata)
    ]
    assert not [
        hit for hit in await store.items(PASSAGES_COLLECTION) if "file:" in str(hit.metadata)
    ]


async def test_the_library_is_searched_beside_the_web_in_the_same_step(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    tmp_path: Path,
) -> None:
    docs = await library_with_a_pdf(tmp_path)
    use_script(script_citing("file:///etc/passwd"))
    out = await run({**NO_CLARIFY, "relevance_threshold": 0.3})

    urls = [source["url"] for source in out["sources"]]
    page_two = f"{(docs / 'energy.pdf').resolve().as_uri()}#page=2"
    assert page_two in urls and any(url.startswith("https://example.org/") for url in urls)
    # The same relevance filter: the cat notes are not about wind.
    assert not any(url.endswith("notes.md") for url in urls)
    assert len(scripted_search.queries) == 1
    assert f"({page_two})" in out["final_report"]
    assert out["citation_check"]["removed_urls"] == ["file:///etc/passwd"]


async def test_search_library_false_keeps_the_library_out_of_web_research(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    tmp_path: Path,
) -> None:
    await library_with_a_pdf(tmp_path)
    use_script(script_citing("file:///etc/passwd"))
    out = await run({**NO_CLARIFY, "search_library": False})
    assert out["sources"] and not [s for s in out["sources"] if s["url"].startswith("file:")]
