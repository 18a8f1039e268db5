"""What a budgeted call sends as its completion limit, through the real ChatOpenAI, to a
scripted server on 127.0.0.1: the role's limit, the one the budget counted it at."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deep_research.config.settings import Context
from deep_research.llm.chat_models import Role
from deep_research.llm.models import role_model
from deep_research.llm.spending import BudgetExceeded, Ledger, micros_of
from deep_research.runtime import prompts
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall

GPT_41 = {f"{role}_model": "openai:gpt-4.1" for role in ("clarifier", "orchestrator", "researcher")}
# A researcher's first turn as it is sent: its system prompt, the topic, the search tool.
FIRST_TURN = [
    SystemMessage(prompts.render("researcher", researcher="a web researcher")),
    HumanMessage("Battery recycling capacity in the EU in 2024-2025"),
]
# --max-cost 0.3 with gpt-4.1: the report's reserve ($0.19: its findings' prompt bound and
# 8,192 tokens) and the planning turns left about $0.10 of research, $0.05 for each of two
# researchers, whose every call was counted at 8,192 tokens ($0.069) and never sent.
SHARE = 0.05


class web_search(BaseModel):  # noqa: N801 - the tool's name as the model sees it
    """Search the web; each query is one search."""

    queries: list[str] = Field(min_length=1, description="1-4 queries")


def searching(body: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[ToolCall("web_search", {"queries": ["EU battery recycling"]})])


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedOpenAIServer]:
    """gpt-4.1 (and the `local:` endpoint) served on 127.0.0.1."""
    with ScriptedOpenAIServer(searching) as running:
        monkeypatch.setenv("OPENAI_BASE_URL", running.base_url)  # stands in for OpenAI
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("LLM_BASE_URL", running.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.delenv("LLM_MAX_TOKENS", raising=False)
        yield running


async def sent_limit(server: ScriptedOpenAIServer, context: Context, role: Role) -> Any:
    """The completion limit `role`'s call sent within a research share (None: none)."""
    server.reset()
    await role_model(context, role).ask(FIRST_TURN, [web_search], Ledger(micros_of(SHARE)))
    [body] = server.requests
    return body.get("max_completion_tokens")


async def test_a_researchers_share_of_a_small_budget_pays_for_its_call_sent_at_4096(
    server: ScriptedOpenAIServer,
) -> None:
    share = Ledger(limit=micros_of(SHARE))
    reply = await role_model(Context(**GPT_41), "researcher").ask(FIRST_TURN, [web_search], share)
    assert [call["name"] for call in reply.tool_calls] == ["web_search"] and share.spent > 0
    assert server.requests[0]["max_completion_tokens"] == 4096
    assert await sent_limit(server, Context(**GPT_41), "clarifier") == 1024


async def test_the_report_writing_role_keeps_the_whole_limit_and_may_be_refused(
    server: ScriptedOpenAIServer,
) -> None:
    with pytest.raises(BudgetExceeded, match=r"by at least \$0\.0\d{3} to go on"):
        await role_model(Context(**GPT_41), "orchestrator").ask(
            FIRST_TURN, [web_search], Ledger(micros_of(SHARE))
        )
    assert server.requests == [], "a call that does not fit is never sent"
    budget = Ledger(limit=micros_of(0.10))
    await role_model(Context(**GPT_41), "orchestrator").ask(FIRST_TURN, [web_search], budget)
    assert server.requests[0]["max_completion_tokens"] == 8192


async def test_a_lower_llm_max_tokens_is_what_is_sent(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_MAX_TOKENS", "2000")
    assert await sent_limit(server, Context(**GPT_41), "researcher") == 2000


async def test_without_a_budget_the_provider_default_stands(
    server: ScriptedOpenAIServer,
) -> None:
    await role_model(Context(**GPT_41), "researcher").ask(FIRST_TURN, [web_search])
    assert "max_completion_tokens" not in server.requests[0]


async def test_a_local_researcher_is_sent_its_roles_limit_with_a_budget_or_without(
    server: ScriptedOpenAIServer,
) -> None:
    # mlx_lm.server would cut it at 512 and drop the tool call; the whole 8k context would
    # let a runaway reply run for minutes: the role's limit, under both names.
    assert await sent_limit(server, Context(), "researcher") == 4096
    server.reset()
    await role_model(Context(), "researcher").ask(FIRST_TURN, [web_search])
    assert server.requests[0]["max_completion_tokens"] == 4096
    assert server.requests[0]["max_tokens"] == 4096  # llama-cpp-python reads only this
