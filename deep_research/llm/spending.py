"""What model calls use and cost, and the budget each call is checked against before it is sent.

A node (or a research task) opens a `Ledger` with what state says is counted against the
budget; `RoleModel.ask` asks it before every request (`admit`: the worst case, prompt
tokens bounded from the request's bytes and completion at most the call's `max_tokens`)
and records every reply (`record`). The node writes the ledger's `usage` and the µUSD it
counted back to state. A call that would take the count past the limit is not sent:
`BudgetExceeded`, which the orchestrator turns into a report from what the run has.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel

from deep_research.errors import ReadableError
from deep_research.llm.prices import MICROS, Price, usd
from deep_research.state import NO_USAGE, RoleUsage, Usage, add_usage

# Role, message framing and tool-call wrapping tokens per message (OpenAI's count is 3-4).
PER_MESSAGE_TOKENS = 8
# For estimates only (marked as such), by script, tokenizer-free (docs/cost.md measures it):
# an ASCII word is one token per 4 letters or part of 4 (letters next to a digit, in hashes
# and identifiers, per 2); each digit and each punctuation mark
# (links, JSON, code) is a token of its own, as is a space before a digit (tokenizers that
# split every digit split it off too); any other character is one token per 2 of its UTF-8
# bytes (Cyrillic 1, Chinese 1.5), but 3 outside the BMP (emoji: 4 bytes).
WORD_CHARS_PER_TOKEN = 4
MIXED_CHARS_PER_TOKEN = 2
NON_ASCII_BYTES_PER_TOKEN = 2
ASTRAL_TOKENS = 3
# A run of letters, with whether a digit is just before (group 1) or after (group 3) it.
_LETTERS = re.compile(r"(?:(?<=([0-9])))?([A-Za-z]+)(?:(?=([0-9])))?")
_SINGLES = re.compile(r"[0-9]|[!-/:-@\[-`{-~]| (?=[0-9])")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class BudgetExceeded(ReadableError, RuntimeError):
    """A model call's worst case would take the run past `max_cost_usd`; it was not sent."""

    # What the call's earlier requests (before a refused nudge) used: still counted.
    usage: Usage = NO_USAGE
    spent: int = 0


class UnknownPriceError(ReadableError, RuntimeError):
    """`max_cost_usd` is set, but a role's model has no known price: it cannot be held."""


# The smallest amount `usd` shows ($0.0001): what a message asks for is rounded up to it.
SHOWN_MICROS = 100

MAX_REPORTED_TOKENS = 100_000_000  # more than any context window: a count above is not one


# Each tool class's schema, for as long as the class lives: an MCP server's tools are made
# anew every researcher turn (`search/mcp_tools.py`), and a kept schema must not keep them.
_schemas: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def tool_schema(tool: type[BaseModel]) -> dict[str, Any]:
    """A tool's JSON schema, made once per tool class: pydantic builds it anew on every
    `model_json_schema()` (0.2-0.3 ms a tool), and every call read it three times (its
    durable key, its prompt's bound, its usage's estimate). Read, never changed."""
    schema = _schemas.get(tool)
    if schema is None:
        schema = _schemas[tool] = tool.model_json_schema()
    return schema


def prompt_bound(messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]]) -> int:
    """At most how many tokens the request's prompt is: every byte-level BPE token covers at
    least one UTF-8 byte, so bytes (plus framing) bound the count for any such tokenizer."""
    text = sum(len(m.text.encode("utf-8", "surrogatepass")) for m in messages)  # as below
    calls = sum(
        len(json.dumps(m.tool_calls).encode()) for m in messages if isinstance(m, AIMessage)
    )
    schemas = sum(len(json.dumps(tool_schema(t)).encode()) for t in tools)
    return text + calls + schemas + PER_MESSAGE_TOKENS * (len(messages) + len(tools) + 1)


def reply_tokens(
    reply: AIMessage, sent: Sequence[BaseMessage], tools: Sequence[type[BaseModel]] = ()
) -> tuple[int, int, bool]:
    """(tokens in, tokens out, estimated): the provider's `usage` when it sent one; else
    `estimated_tokens` of each side, marked so (a server that sends no usage is usually local)."""
    reported = reply.usage_metadata
    counts = (
        (reported.get("input_tokens", 0), reported.get("output_tokens", 0)) if reported else (0, 0)
    )
    # A server's own count, when it is one: whole, not negative (a negative count would
    # give budget back), and not absurd; anything else is estimated like no count at all.
    if any(counts) and all(type(n) is int and 0 <= n <= MAX_REPORTED_TOKENS for n in counts):
        return counts[0], counts[1], False
    prompt = sum(estimated_tokens(_said(m)) + PER_MESSAGE_TOKENS for m in sent)
    prompt += sum(estimated_tokens(json.dumps(tool_schema(t), ensure_ascii=False)) for t in tools)
    return prompt, estimated_tokens(_said(reply)), True


def estimated_tokens(text: str) -> int:
    """About how many tokens `text` is, in any script, without a tokenizer: at least as many
    as the common tokenizers count, so a budget held with it is not overspent."""
    size = len(text.encode("utf-8", "surrogatepass"))  # a lone surrogate is 3 bytes, no error
    ascii_chars = len(text.encode("ascii", "ignore"))
    astral = len(_ASTRAL.findall(text))
    other_bytes = size - ascii_chars - 4 * astral
    ascii_tokens = len(_SINGLES.findall(text)) + sum(
        -(-len(word) // (MIXED_CHARS_PER_TOKEN if before or after else WORD_CHARS_PER_TOKEN))
        for before, word, after in _LETTERS.findall(text)
    )
    return (
        ascii_tokens + math.ceil(other_bytes / NON_ASCII_BYTES_PER_TOKEN) + ASTRAL_TOKENS * astral
    )


def _said(message: BaseMessage) -> str:
    """A message's text and its tool calls, as the server reads (or wrote) them."""
    calls = (
        json.dumps(message.tool_calls, ensure_ascii=False) if isinstance(message, AIMessage) else ""
    )
    return message.text + (calls if calls != "[]" else "")


def micros_of(limit_usd: float | None) -> int | None:
    return None if limit_usd is None else math.floor(limit_usd * MICROS)


@dataclass
class Ledger:
    """One node's (or task's) view of the budget: `limit` µUSD in all, `counted` so far."""

    limit: int | None  # None: no budget, calls are only counted
    counted: int = 0
    usage: Usage = field(default_factory=lambda: NO_USAGE)
    spent: int = 0  # µUSD this ledger's calls cost (what the node adds to state)
    # False on a step that runs again after a stop: under a budget its calls with no saved
    # answer are counted at their worst case, not sent (llm/models.py, runtime/process.py).
    fresh: bool = True

    def admit(self, price: Price, prompt_tokens: int, max_tokens: int | None) -> None:
        """Raise unless the call's worst case fits what is left; nothing is counted yet."""
        if self.limit is None:
            return
        if not price.known:
            raise UnknownPriceError(
                f"max_cost_usd is set, but the price of {price.spec} is not in genai-prices' "
                "table, so its calls cannot be held to a budget. Use a model it lists, or "
                "unset MAX_COST_USD."
            )
        worst = price.micros(prompt_tokens, max_tokens or 0)
        assert worst is not None
        if price.free or worst == 0:
            return
        if max_tokens is None:  # no completion limit: the worst case has no bound
            raise UnknownPriceError(
                f"{price.spec} has no completion limit, so a call's cost has no upper bound "
                "under max_cost_usd."
            )
        left = self.limit - self.counted
        if worst > left:
            # What is missing, rounded up to what `usd` shows, so the raise named is never a
            # hair too small; "at least", as a research task gets only its share of a raise.
            short = math.ceil((worst - left) / SHOWN_MICROS) * SHOWN_MICROS
            raise BudgetExceeded(
                f"The next call to {price.spec} could cost up to {usd(worst)} (its prompt "
                f"and a reply of up to {max_tokens:,} tokens), and {usd(max(0, left))} of the "
                f"budget is left for it: raise --max-cost (max_cost_usd) by at least "
                f"{usd(short)} to go on."
            )

    def record(self, role: str, price: Price, tokens: tuple[int, int, bool]) -> RoleUsage:
        """Count one reply; returns what it used and cost (for its progress event)."""
        tokens_in, tokens_out, estimated = tokens
        cost = price.micros(tokens_in, tokens_out)
        self.spent += cost or 0
        self.counted += cost or 0
        used = RoleUsage(
            calls=1,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            usd=None if cost is None else cost / MICROS,
            estimated=int(estimated),
        )
        self.usage = add_usage(self.usage, Usage(**used, by_role={role: used}))
        return used

    def absorb(self, usage: Usage, micros: int) -> None:
        """Add what one call used and the µUSD it is counted at (its cost, or its worst case
        when it may have been sent before a stop)."""
        self.usage = add_usage(self.usage, usage)
        self.spent += micros
        self.counted += micros

    def update(self) -> dict[str, Any]:
        """What a node adds to state: its calls' usage and the µUSD they cost."""
        return {"usage": self.usage, "cost_counted": self.spent}

    def left(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.counted)
