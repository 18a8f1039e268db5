"""What a model call costs, from `genai-prices`' bundled price table; what a search costs.

`genai-prices` (pydantic's, per provider and model, dated) ships its table inside the
package and is only updated by an upgrade: nothing is fetched while a run runs, so a
price never changes under a budget. Amounts are whole micro-dollars (µUSD), so a budget's
sums and give-backs are exact integers; a fraction of a µUSD is rounded up, never down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from genai_prices import Usage, calc_price

MICROS = 1_000_000  # µUSD per USD

# A model on the user's own machine costs nothing per call.
FREE_PROVIDERS = frozenset({"local", "ollama"})
# `provider:` of a spec -> genai-prices' provider id, where the two names differ.
PROVIDER_IDS = {
    "google_genai": "google",
    "google_vertexai": "google",
    "mistralai": "mistral",
    "xai": "x-ai",
    "azure_openai": "azure",
    "bedrock": "aws",
    "bedrock_converse": "aws",
    "anthropic_bedrock": "aws",
}
# Tavily's credits per search, by depth (https://docs.tavily.com/documentation/api-credits).
TAVILY_CREDITS = {"basic": 1, "advanced": 2}


@dataclass(frozen=True)
class Price:
    """µUSD per million tokens of a model; `free` for a local one, `None` rates: unknown."""

    spec: str
    input_per_mtok: Decimal | None
    output_per_mtok: Decimal | None
    free: bool = False

    @property
    def known(self) -> bool:
        return self.free or self.input_per_mtok is not None

    def micros(self, tokens_in: int, tokens_out: int) -> int | None:
        """The call's cost in µUSD, rounded up; `None` when the price is unknown."""
        if self.free:
            return 0
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return None
        usd_times_mtok = self.input_per_mtok * tokens_in + self.output_per_mtok * tokens_out
        # USD per MTok x tokens / 1e6 = USD; x 1e6 = µUSD: the two factors cancel.
        return math.ceil(usd_times_mtok)

    def describe(self) -> str:
        """One line for the summary: where the price came from."""
        if self.free:
            return f"{self.spec}: free (runs on your machine)"
        if not self.known:
            return f"{self.spec}: price unknown (not in genai-prices' table)"
        return (
            f"{self.spec}: ${self.input_per_mtok}/M in, ${self.output_per_mtok}/M out "
            "(genai-prices)"
        )


def price_of(spec: str) -> Price:
    """The price of a 'provider:model' spec; unknown, never 0, when the table lacks it."""
    provider, _, name = spec.partition(":")
    if provider in FREE_PROVIDERS:
        return Price(spec, Decimal(0), Decimal(0), free=True)
    try:
        # Rates at one million tokens each way are the table's per-MTok prices, tiers aside.
        found = calc_price(
            Usage(input_tokens=1, output_tokens=1),
            model_ref=name,
            provider_id=PROVIDER_IDS.get(provider, provider),
        )
    except LookupError:
        return Price(spec, None, None)
    rates = found.model_price
    return Price(spec, _rate(rates.input_mtok), _rate(rates.output_mtok))


def _rate(value: object) -> Decimal | None:
    """A flat per-MTok rate; a tiered one (by prompt length) counts at its highest tier."""
    if value is None:
        return Decimal(0)
    if isinstance(value, Decimal | int | float):
        return Decimal(str(value))
    tiers = getattr(value, "tiers", None)
    base = getattr(value, "base", None)
    if tiers is not None and base is not None:
        return max([Decimal(str(base)), *(Decimal(str(t.price)) for t in tiers)])
    return None  # a shape this code does not know: unknown rather than wrong


def search_micros(provider: str, depth: str, credit_usd: float) -> int:
    """A search's cost in µUSD: Tavily's credits at `credit_usd` each; the others are free."""
    if provider != "tavily":
        return 0
    return math.ceil(TAVILY_CREDITS.get(depth, 2) * credit_usd * MICROS)


def usd(micros: int | None) -> str:
    """`$0.0123`, or "unknown"."""
    if micros is None:
        return "unknown"
    return f"${micros / MICROS:,.4f}"
