"""Threat: a model server that lies about its usage. An OpenAI-compatible server (a proxy, a
buggy local build) may report negative, fractional or absurd token counts: a negative count
would give budget back, so none of them is taken as a count. The reply is then estimated
(`estimated_tokens`), marked as estimated, and what the ledger counted never goes down. A
server that sends no usage at all, in a script of a token a character, is held to the budget."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from deep_research.llm.prices import MICROS, price_of
from deep_research.llm.spending import Ledger, reply_tokens
from tests.support.brain import ResearchBrain, _texts, role_of
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.live import research_run, serve

PRICED = {f"{role}_model": "openai:gpt-4o-mini" for role in ("clarifier", "orchestrator")}
PRICED["researcher_model"] = "openai:gpt-4o-mini"

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


# About a token a character: what the tokenizers of priced models count for Chinese (Llama
# 3's 0.8, o200k's less), and English at 4 characters a token (docs/cost.md's table).
def true_ish_tokens(text: str) -> int:
    return math.ceil(sum(1 if ord(c) > 127 else 0.25 for c in text))


# genai-prices' gpt-4o-mini, µUSD per token: what the server bills.
IN_MICROS, OUT_MICROS = 0.15, 0.6
CHINESE = "热泵在零下十五度仍能保持大部分制热能力，运行成本取决于电价和房屋的保温。"


@dataclass
class ChineseBrain(ResearchBrain):
    """A server that never sends `usage` and answers in Chinese: researchers write 2,000
    characters a report, the orchestrator asks for one more topic every turn (only the budget
    ends the research). Bills each reply at a token a character, as a provider would."""

    bills: list[float] = field(default_factory=list)
    written: int = 0  # Chinese characters the server produced

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        turn = len(_texts(body, "tool"))
        return Reply(tool_calls=[ToolCall("research", {"topic": f"热泵 {turn}"})])

    async def __call__(self, body: dict[str, Any]) -> Reply:
        reply = await super().__call__(body)
        if role_of(body) == "researcher" and _texts(body, "tool"):
            reply.content += "\n\n" + CHINESE * (2_000 // len(CHINESE))
        reply.omit_usage = True
        self.written += sum(ord(c) > 127 for c in reply.content)
        said = reply.content + "".join(c.arguments_text() for c in reply.tool_calls)
        prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
        prompt += json.dumps(body.get("tools", []), ensure_ascii=False)
        self.bills.append(IN_MICROS * true_ish_tokens(prompt) + OUT_MICROS * true_ish_tokens(said))
        return reply


@pytest.mark.slow
async def test_a_server_without_usage_answering_in_chinese_is_held_to_the_budget(
    monkeypatch: pytest.MonkeyPatch, tavily: Any
) -> None:
    """Threat: a server that omits `usage` (a proxy before a paid model) and answers in a
    script of about a token a character. Counted at characters ÷ 4, this run went on until the
    server had billed $0.081 of a $0.05 budget; the estimate counts at least what it bills."""
    budget = 0.05
    brain = ChineseBrain(topics=[], queries_per_search=1)
    with serve(brain, monkeypatch) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # gpt-4o-mini, served locally
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
        # Turns and searches to spare: only the budget ends the research.
        limits = {"max_orchestrator_turns": 50, "max_searches_per_run": 500}
        out = await research_run({**PRICED, **limits, "max_cost_usd": budget})
    usage = out["usage"]
    assert usage["estimated"] == usage["calls"] > 4, "every call estimated; research ran"
    assert "Cost budget" in out["final_report"], "the budget, not the brain, ended research"
    billed = sum(brain.bills) / MICROS
    assert billed <= budget, f"the server billed ${billed:.4f} under a ${budget} budget"
    assert usage["tokens_out"] >= brain.written, "a token a character, at least"
    searches = usage["by_role"]["search"]["usd"]
    assert usage["usd"] - searches >= billed, "counted at least what was billed"
