"""The report writer's call under a budget: its findings shrink until the call fits."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from deep_research.llm.models import RoleModel
from deep_research.llm.prices import price_of
from deep_research.llm.spending import BudgetExceeded, Ledger
from deep_research.nodes.report_writer import report_reserve, write_report
from tests.support.scripted_model import ScriptedChatModel


def writer(seen: list[int]) -> RoleModel:
    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        seen.append(len(messages[-1].text))
        return AIMessage(
            "# Report", usage_metadata={"input_tokens": 10, "output_tokens": 10, "total_tokens": 20}
        )

    model = ScriptedChatModel(script=script)
    return RoleModel(
        model,
        "http://x",
        "orchestrator",
        "openai:gpt-4o-mini",
        30.0,
        max_tokens=1000,
        price=price_of("openai:gpt-4o-mini"),
    )


async def test_the_findings_are_cut_until_the_report_fits() -> None:
    seen: list[int] = []
    # 1,000 reply tokens = 600 µUSD; 2,000 µUSD leaves room for ~9,000 prompt bytes only.
    reply = await write_report(writer(seen), lambda chars: "f" * chars, Ledger(limit=2_000), "")
    assert reply.text == "# Report" and seen and seen[0] < 10_000


async def test_no_room_even_for_the_reply_is_a_clear_error_and_nothing_is_sent() -> None:
    seen: list[int] = []
    with pytest.raises(BudgetExceeded, match="Not even the report fits"):
        await write_report(writer(seen), lambda chars: "f" * chars, Ledger(limit=500), "")
    assert seen == []


def test_the_reserve_covers_a_quarter_of_the_findings_and_a_full_reply() -> None:
    """`write_report` halves the findings until the call fits: a quarter is kept back."""
    reserved = report_reserve(writer([]), "")
    assert 15_000 * 0.15 + 1000 * 0.6 < reserved < 30_000 * 0.15 + 1000 * 0.6


async def test_the_readers_wishes_go_into_the_writers_system_prompt_and_its_reserve() -> None:
    systems: list[str] = []

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        systems.append(messages[0].text)
        return AIMessage("# Bericht")

    model = RoleModel(ScriptedChatModel(script=script), "http://x", "orchestrator", "local:m", 30.0)
    wishes = "Language: write all of it in German."
    await write_report(model, lambda chars: "findings", Ledger(None), wishes)
    assert systems and systems[0].endswith(wishes) and "research phase is over" in systems[0]
    priced = writer([])
    assert report_reserve(priced, "w" * 4_000) > report_reserve(priced, "")
