"""The ledger a node holds its model calls to: worst cases, provider usage, estimates."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deep_research.llm.prices import MICROS, price_of
from deep_research.llm.spending import (
    BudgetExceeded,
    Ledger,
    UnknownPriceError,
    estimated_tokens,
    prompt_bound,
    reply_tokens,
)

MINI = price_of("openai:gpt-4o-mini")


def test_the_prompt_bound_is_at_least_its_bytes() -> None:
    text = "Wärmepumpe " * 100  # non-ASCII: more bytes than characters
    bound = prompt_bound([SystemMessage("s"), HumanMessage(text)], [])
    assert bound >= len(text.encode()) > len(text)


def test_provider_usage_is_taken_as_reported_and_an_estimate_is_marked() -> None:
    reply = AIMessage(
        "four", usage_metadata={"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    )
    assert reply_tokens(reply, [HumanMessage("x" * 400)]) == (7, 3, False)
    # No usage: each side estimated, a message's framing (8) on the prompt's.
    assert reply_tokens(AIMessage("x" * 40), [HumanMessage("x" * 400)]) == (108, 10, True)


# (text, tokens at least): about one a character in Chinese, Japanese and Korean, whatever
# their bytes; Cyrillic one a letter; an emoji (4 bytes) three; ASCII words 4 a token; each
# digit and ASCII punctuation mark one (links and JSON split there), letters beside digits 2
# a token. benchmarks/tokens.py has the real tokenizers' counts (docs/cost.md).
@pytest.mark.parametrize(
    ("text", "least"),
    [
        ("热泵在寒冷的天气里也能工作", 13),
        ("ヒートポンプは寒い日でも動きます", 16),
        ("히트펌프는 추운 날에도", 11),
        ("Тепловые насосы", 14),
        ("🔥🏠", 6),
        ("heat pumps work", 4),
        ('{"q": "x"}', 7),
        ("2024 1,284 17.5%", 14),  # every digit split off, the spaces before them too
        ("9f86d081884c7d65", 16),  # a hash: digits one each, the letters between them
    ],
)
def test_an_estimate_holds_for_any_script(text: str, least: int) -> None:
    assert estimated_tokens(text) >= least
    assert estimated_tokens(text) <= len(text.encode()) + 1, "no more than a token a byte"


def test_an_estimate_takes_any_string() -> None:
    assert estimated_tokens("") == 0
    assert estimated_tokens("\ud800 lone surrogate") > 0  # from a JSON escape: no crash
    huge = "热" * 1_000_000
    assert estimated_tokens(huge) == 1_500_000


def test_a_reply_without_usage_in_chinese_is_counted_a_token_a_character_or_more() -> None:
    answer = "热泵即使在寒冷的天气里也能把室外空气中的热量送进房子里。" * 50
    tokens_in, tokens_out, estimated = reply_tokens(AIMessage(answer), [HumanMessage(answer)])
    assert estimated and tokens_out >= len(answer) and tokens_in >= len(answer)
    call = AIMessage("", tool_calls=[{"name": "web_search", "args": {"q": answer}, "id": "1"}])
    assert reply_tokens(call, [HumanMessage("q")])[1] >= len(answer), "tool calls count too"


def test_an_estimated_prompt_counts_the_tool_schemas_sent_with_it() -> None:
    class WebSearch(BaseModel):
        """Search the web; the description is sent, and billed, with every request."""

        queries: list[str] = Field(description="热泵 " * 200)

    sent = [HumanMessage("q")]
    bare = reply_tokens(AIMessage("a"), sent)[0]
    assert reply_tokens(AIMessage("a"), sent, [WebSearch])[0] >= bare + 600


def test_a_call_whose_worst_case_does_not_fit_is_refused_and_nothing_counted() -> None:
    ledger = Ledger(limit=10_000, counted=5_000)
    ledger.admit(MINI, 1_000, 1_000)  # 150 + 600 µUSD fits
    with pytest.raises(BudgetExceeded, match=r"up to \$0\.0064 .* \$0\.0050 of the budget"):
        ledger.admit(MINI, 10_000, 8_192)  # 1,500 + 4,916 > 5,000 left
    assert ledger.counted == 5_000 and ledger.spent == 0
    ledger.record("researcher", MINI, (10_000, 500, False))
    assert ledger.counted == 6_800 and ledger.spent == 1_800
    assert ledger.usage["by_role"]["researcher"]["usd"] == pytest.approx(0.0018)
    assert ledger.update() == {"usage": ledger.usage, "cost_counted": 1_800}


def test_a_refusal_names_a_raise_of_max_cost_that_lets_the_call_through() -> None:
    ledger = Ledger(limit=10_000, counted=5_000)
    with pytest.raises(BudgetExceeded) as refused:
        ledger.admit(MINI, 10_000, 8_192)  # 6,416 µUSD at worst, 5,000 left: 1,416 short
    # docs/cost.md quotes it.
    assert str(refused.value) == (
        "The next call to openai:gpt-4o-mini could cost up to $0.0064 (its prompt and a reply "
        "of up to 8,192 tokens), and $0.0050 of the budget is left for it: raise --max-cost "
        "(max_cost_usd) by at least $0.0015 to go on."
    ), "one line, the 1,416 µUSD missing rounded up, never down"
    raise_by = re.search(r"by at least \$(\S+) to go on", str(refused.value))
    assert raise_by is not None
    raised = Ledger(limit=10_000 + int(Decimal(raise_by[1]) * MICROS), counted=5_000)
    raised.admit(MINI, 10_000, 8_192)


def test_an_unknown_price_under_a_budget_is_an_error_and_without_one_is_counted_unknown() -> None:
    unknown = price_of("openai:no-such-model-xyz")
    with pytest.raises(UnknownPriceError, match="no-such-model-xyz"):
        Ledger(limit=1_000).admit(unknown, 10, 10)
    free = Ledger(limit=None)
    free.admit(unknown, 10**9, 10**9)
    free.record("orchestrator", unknown, (10, 10, False))
    assert free.usage["usd"] is None and free.spent == 0


def test_the_docs_table_of_estimates_is_what_the_benchmark_prints() -> None:
    """docs/cost.md's comparison (`python -m benchmarks.tokens`): its samples, its estimates,
    and every modern tokenizer's count at or under the estimate."""
    from pathlib import Path

    from benchmarks.tokens import SAMPLES

    docs = (Path(__file__).resolve().parents[3] / "docs" / "cost.md").read_text()
    header = next(line for line in docs.splitlines() if line.startswith("| text | chars |"))
    names = [cell.strip() for cell in header.strip("|").split("|")]
    rows = {
        cells[0]: dict(zip(names, cells, strict=True))
        for line in docs.splitlines()
        if line.startswith("| ")
        and (cells := [cell.strip() for cell in line.strip("|").split("|")])[0] in SAMPLES
    }
    assert list(rows) == list(SAMPLES)
    for label, row in rows.items():
        assert int(row["estimate"]) == estimated_tokens(SAMPLES[label]), label
        assert int(row["chars"]) == len(SAMPLES[label]), label
        for modern in ("llama-bpe", "qwen35", "gemma-4", "command-r"):
            assert int(row[modern]) <= int(row["estimate"]), (label, modern)


def test_a_tools_schema_is_made_once_and_is_pydantics(monkeypatch: pytest.MonkeyPatch) -> None:
    from deep_research.llm.spending import PER_MESSAGE_TOKENS, tool_schema

    class Lookup(BaseModel):
        """Look something up."""

        query: str

    made: list[int] = []
    real = Lookup.model_json_schema
    monkeypatch.setattr(Lookup, "model_json_schema", lambda: made.append(1) or real())
    first = tool_schema(Lookup)
    assert first == real() and first["title"] == "Lookup"
    assert tool_schema(Lookup) is first and len(made) == 1, "each call read it anew"
    # The bounds read it as before: the prompt's bound counts its JSON bytes.
    bound = prompt_bound([], [Lookup])
    assert bound == prompt_bound([], []) + len(json.dumps(first).encode()) + PER_MESSAGE_TOKENS
    assert len(made) == 1


def test_a_kept_schema_does_not_keep_its_tool_class() -> None:
    # An MCP server's tools are new classes every researcher turn: once one is gone, so is
    # its schema.
    import gc
    import weakref

    from pydantic import create_model

    from deep_research.llm.spending import tool_schema

    offered = create_model("Offered", query=(str, ...))
    assert tool_schema(offered)["title"] == "Offered"
    gone = weakref.ref(offered)
    del offered
    gc.collect()
    assert gone() is None
