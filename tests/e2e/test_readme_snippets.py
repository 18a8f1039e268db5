"""What the docs tell a reader to paste works where they say: Python, MCP configs, Studio."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from tests.support.brain import LINK, ResearchBrain, role_of
from tests.support.fakes.openai_server import ScriptedOpenAIServer, system_text
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.readme import (
    FENCE,
    PAGES,
    REPO,
    block_after,
    run_with_top_level_await,
    section,
)


async def test_the_from_python_snippet_runs_as_written_and_keeps_its_context_on_resume(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    snippet = block_after("```python", section("# From Python"))
    assert "context=context" in snippet.split("Command(resume=", 1)[1]
    with ScriptedOpenAIServer(ResearchBrain()) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            await run_with_top_level_await(snippet)
        bodies = llm.requests
    printed = output.getvalue()
    assert "Which climate zone?" in printed, "the clarifying questions are printed"
    cited = set(LINK.findall(printed))
    assert cited and cited <= tavily.returned_urls, printed
    orchestrator = [body for body in bodies if role_of(body) == "orchestrator"]
    assert orchestrator, "the resumed run reached the orchestrator"
    assert all("15 searches" in system_text(body) for body in orchestrator)


def test_the_docs_say_studio_is_hosted_and_the_api_works_offline() -> None:
    for text in (
        section("### Agent Server and Studio"),
        section("# Through the Agent Server and Studio"),
    ):
        assert "hosted" in text and "internet" in text and "2024" in text and "offline" in text


TOP_LEVEL_AWAIT = re.compile(r"^(\S.*)?\bawait ", re.MULTILINE)


def test_every_page_with_a_top_level_await_says_where_it_works() -> None:
    pages = [
        name
        for name, text in PAGES.items()
        if any(
            lang == "python" and TOP_LEVEL_AWAIT.search(body) for lang, body in FENCE.findall(text)
        )
    ]
    assert len(pages) >= 3, pages  # the Python API, the Agent Server, the plan review
    for name in pages:
        assert "python -m asyncio" in PAGES[name] and "Jupyter" in PAGES[name], name


MCP_URL = "http://127.0.0.1:2024/mcp"


def test_the_mcp_client_configs_are_valid_json_pointing_at_the_server() -> None:
    text = section("# As an MCP tool (Claude Desktop, Cursor, VS Code)")
    configs = {
        client: json.loads(block_after(f"**{client}**", text))
        for client in ("Claude Desktop", "Cursor", "VS Code")
    }
    # Claude Desktop's file starts commands: mcp-remote bridges to the URL.
    desktop = configs["Claude Desktop"]["mcpServers"]["deep_research"]
    assert desktop["command"] == "npx" and desktop["args"][-1] == MCP_URL
    assert configs["Cursor"]["mcpServers"]["deep_research"] == {"url": MCP_URL}
    assert configs["VS Code"]["servers"]["deep_research"] == {"type": "http", "url": MCP_URL}
    assert json.loads((REPO / "langgraph.json").read_text())["http"] == {
        "app": "deep_research.mcp:app",
        "disable_mcp": True,
    }
