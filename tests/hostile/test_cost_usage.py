"""Threat: a model server that lies about its usage. An OpenAI-compatible server (a proxy, a
buggy local build) may report negative, fractional or absurd token counts: a negative count
would give budget back, so none of them is taken as a count. The reply is then estimated
from its characters, marked as estimated, and what the ledger counted never goes down."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from deep_research.llm.prices import price_of
from deep_research.llm.spending import Ledger, reply_tokens
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer

ANSWER = "Heat pumps keep most of their output at minus fifteen degrees. " * 20


@pytest.mark.parametrize(
    ("prompt_tokens", "completion_tokens"),
    [(-5_000_000, 10), (10, -1), (10**12, 10)],
)
async def test_reported_usage_that_is_no_count_is_estimated_and_never_refunds(
    prompt_tokens: int, completion_tokens: int
) -> None:
    reply = Reply(ANSWER, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    with ScriptedOpenAIServer(lambda body: reply) as llm:
        model = ChatOpenAI(
            model="gpt-4o-mini", base_url=llm.base_url, api_key="sk-test", max_retries=0
        )
        sent = [HumanMessage("How well do heat pumps work in the cold?")]
        answer = await model.ainvoke(sent)
    tokens_in, tokens_out, estimated = reply_tokens(answer, sent)
    assert estimated and tokens_in > 0 and tokens_out >= len(ANSWER) // 8
    ledger = Ledger(limit=1_000_000, counted=500)
    ledger.record("researcher", price_of("openai:gpt-4o-mini"), (tokens_in, tokens_out, True))
    assert ledger.counted > 500 and ledger.spent > 0, "counted never goes down"
    assert ledger.usage["estimated"] == 1
