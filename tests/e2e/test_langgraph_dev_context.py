"""Bad user input under `langgraph dev`: a per-run context key that is not a setting.

langgraph-api drops context keys outside the schema before the graph sees them, so a typo
would run with the default unnoticed; the graph factory named in `langgraph.json` rejects
it with the error `Context` gives everywhere else.
"""

from __future__ import annotations

import pytest
from langgraph_sdk import get_client

from tests.support.langgraph_dev import ASSISTANT, DevServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUESTION = {"messages": [{"role": "user", "content": "How well do heat pumps work?"}]}
RUN_TIMEOUT = 120.0


async def test_a_misspelt_context_key_fails_the_run_naming_the_key(server: DevServer) -> None:
    url, model, tavily = server.url, server.model, server.tavily
    client = get_client(url=url, api_key=None, timeout=RUN_TIMEOUT)
    thread_id = (await client.threads.create())["thread_id"]
    calls, searches = len(model.requests), len(tavily.queries)
    with pytest.raises(Exception, match="unknown setting.*max_search_per_run") as error:
        await client.runs.wait(
            thread_id,
            ASSISTANT,
            input=QUESTION,
            context={"allow_clarification": False, "max_search_per_run": 0},
            raise_error=True,
        )
    assert "ConfigError" in str(error.value)
    assert len(model.requests) == calls and len(tavily.queries) == searches, "nothing ran"


async def test_valid_context_keys_still_run_to_a_report(server: DevServer) -> None:
    url, tavily = server.url, server.tavily
    client = get_client(url=url, api_key=None, timeout=RUN_TIMEOUT)
    thread_id = (await client.threads.create())["thread_id"]
    before = len(tavily.queries)
    context = {"allow_clarification": False, "max_searches_per_run": 1}
    await client.runs.wait(thread_id, ASSISTANT, input=QUESTION, context=context, raise_error=True)
    values = (await client.threads.get_state(thread_id))["values"]
    assert isinstance(values, dict) and values["final_report"].lstrip().startswith("#")
    assert values["searches_used"] == 1 and len(tavily.queries) - before == 1
