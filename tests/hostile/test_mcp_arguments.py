"""Threat: an MCP caller's arguments the tool does not know, or of the wrong type. Each is
refused with an error result naming it, before any run: dropped, `searchProvider: "library"`
researched the web, and `max_searches: true` ran as 1. The real `mcp` client against the
project's `/mcp` on one real `langgraph dev` for the module."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from tests.support.langgraph_dev import DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = "How well do heat pumps work in cold climates?"


async def test_the_schema_allows_no_other_argument(server: DevServer) -> None:
    async with Client(server.mcp_url) as client:
        [tool] = (await client.list_tools()).tools
    assert tool.input_schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"searchProvider": "library"}, "unknown argument `searchProvider`"),
        ({"max_search": 1}, "unknown argument `max_search`"),
        ({"max_searches": True}, "`max_searches`: input should be a valid integer (got a boolean)"),
        ({"max_searches": "5"}, "`max_searches`: input should be a valid integer (got a string)"),
        ({"clarify": "no"}, "`clarify`: input should be a valid boolean (got a string)"),
        ({"clarify": 1}, "`clarify`: input should be a valid boolean (got an integer)"),
    ],
)
async def test_an_unknown_or_mistyped_argument_is_refused_naming_it(
    server: DevServer, arguments: dict[str, Any], named: str
) -> None:
    server.model.reset()
    searched = len(server.tavily.queries)
    async with Client(server.mcp_url) as client:
        result = await client.call_tool("deep_research", {"question": QUESTION, **arguments})
    assert result.is_error, result
    [block] = result.content
    assert isinstance(block, TextContent)
    assert named in block.text and "search_provider" in block.text  # what it may be called
    assert server.model.requests == [] and len(server.tavily.queries) == searched  # no run
