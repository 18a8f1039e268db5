"""Prices from genai-prices' bundled table: known models, an unknown one, free local ones."""

from __future__ import annotations

from decimal import Decimal

from deep_research.llm.prices import price_of, search_micros, usd


def test_known_cloud_models_are_priced_from_the_table() -> None:
    mini = price_of("openai:gpt-4o-mini")
    assert (mini.input_per_mtok, mini.output_per_mtok) == (Decimal("0.15"), Decimal("0.6"))
    assert mini.micros(1_000_000, 1_000_000) == 750_000  # $0.15 + $0.60
    assert mini.micros(10_000, 500) == 1_800
    # Tiered by prompt length ($3/$15, over 200k tokens $6/$22.50): counted at the top tier,
    # so a budget is never passed by a long prompt (and short ones are counted high).
    assert price_of("anthropic:claude-sonnet-4-5").micros(1000, 500) == 17_250
    assert "genai-prices" in mini.describe()


def test_an_unknown_model_is_unknown_never_zero() -> None:
    price = price_of("openai:no-such-model-xyz")
    assert not price.known and price.micros(1000, 1000) is None
    assert usd(price.micros(1, 1)) == "unknown" and "unknown" in price.describe()


def test_local_and_ollama_models_are_free_and_say_so() -> None:
    for spec in ("local:mlx-community/Qwen3-8B-4bit", "ollama:qwen3:8b"):
        price = price_of(spec)
        assert price.free and price.micros(10**6, 10**6) == 0
        assert "free" in price.describe()


def test_tavily_searches_cost_credits_and_the_others_are_free() -> None:
    assert search_micros("tavily", "basic", 0.008) == 8_000
    assert search_micros("tavily", "advanced", 0.008) == 16_000
    assert search_micros("searxng", "basic", 0.008) == 0
    assert search_micros("ddgs", "advanced", 0.008) == search_micros("library", "", 1) == 0


def test_amounts_read_as_dollars() -> None:
    assert usd(1_800) == "$0.0018" and usd(0) == "$0.0000"
