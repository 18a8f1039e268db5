"""One request to a role's chat model, as `RoleModel` (models.py) sends each of its calls.

`Sender._fitted` shortens a request the server calls too long until it fits; `Sender._call`
sends one: admitted by the ledger first, secrets scrubbed from its messages, under the
whole-call deadline, retried where the client does not retry (each attempt seen), its
errors readable, and what it used recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel

from deep_research.llm import attempts, slots, spending
from deep_research.llm import errors as model_errors
from deep_research.llm.chat_models import Role
from deep_research.llm.errors import ContextTooLongError, ModelDeadlineError
from deep_research.llm.prices import Price, price_of
from deep_research.llm.spending import Ledger
from deep_research.runtime import process, progress, tracing
from deep_research.text import limits, secrets
from deep_research.text.controls import without_surrogates_in


@dataclass(frozen=True)
class Sender:
    """A role's chat model plus where it sends requests (for error messages; never a key)."""

    model: BaseChatModel
    endpoint: str
    role: Role
    spec: str
    deadline: float  # seconds one `_call` may take, the client's retries included
    retries: int = 0  # done around the call, for clients that do not retry themselves
    price: Price | None = None  # None: priced from `spec` (llm/prices.py)
    # The completion limit a budgeted call is sent with and counted at (the role's, see
    # `chat_models.completion_tokens`); without a budget the client's own applies.
    max_tokens: int | None = None
    timeout: float | None = None  # LLM_TIMEOUT: how long one read may wait (for messages)
    ledger: Ledger | None = None  # set per `ask`: the budget its requests are held to
    # Whether its server may answer one request at a time (`one_slot_server`, llm/slots.py).
    one_slot: slots.Mode = "off"

    async def _fitted(
        self, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]]
    ) -> tuple[AIMessage, list[BaseMessage]]:
        """The reply and the messages that got it: shortened while the server says too long.

        Each retry is strictly shorter (`limits.shorten`), so the server never gets the same
        prompt twice; after `limits.SHORTEN_ROUNDS` the error says how to raise the context.
        """
        attempt = list(messages)
        for shortened in range(limits.SHORTEN_ROUNDS + 1):
            try:
                return await self._call(attempt, tools), attempt
            except ContextTooLongError as refusal:
                shorter = limits.shorten(attempt) if shortened < limits.SHORTEN_ROUNDS else None
                if shorter is None:
                    raise ContextTooLongError(
                        f"The {self.role} model at {self.endpoint} refused the request as too "
                        f"long for its context, also after shortening it {shortened} time(s) "
                        f"to {_chars(attempt):,} characters ({refusal}). Raise the server's "
                        "context size (llama.cpp: -c 32768; Ollama: OLLAMA_CONTEXT_LENGTH=32768; "
                        "vLLM: --max-model-len), or use a model with a longer context."
                    ) from None
                attempts.seen_retry(
                    self.role,
                    self.spec,
                    shortened + 2,
                    "too_long",
                    f"too long for the server's context ({_chars(attempt):,} characters); "
                    f"shortened to {_chars(shorter):,}",
                )
                attempt = shorter
        raise AssertionError("unreachable: the last round returns or raises")

    async def _call(
        self, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]]
    ) -> AIMessage:
        """One request; an unreachable or stalled server becomes one clear `ModelEndpointError`."""
        runnable: Any = self.model.bind_tools(list(tools)) if tools else self.model
        price = self.price or price_of(self.spec)
        if self.ledger is not None:
            # Not sent if its worst case does not fit: the prompt's bound, the whole reply.
            prompt = spending.prompt_bound(messages, tools)
            self.ledger.admit(price, prompt, self.max_tokens)
            if self.ledger.limit is not None and self.max_tokens is not None:
                runnable = runnable.bind(max_tokens=self.max_tokens)
        # A key never goes to a server other than its own: its own travels in the header,
        # and no message may carry any (a search API's error text can quote its key).
        sent = [_without_secrets(message) for message in messages]
        deadline: asyncio.Timeout | None = None
        config = tracing.model_config(self.role, self.spec)

        reasons: list[attempts.RetryReason] = []

        def seen(attempt: int, reason: attempts.RetryReason, error: BaseException) -> None:
            model_errors.scrub_error(error)
            reasons.append(reason)
            attempts.seen_retry(self.role, self.spec, attempt, reason, attempts.error_line(error))

        gate = slots.gate(self.endpoint, self.spec)
        try:
            # Its turn at a one-slot server is waited for first, as in a queue: the deadline
            # starts once the call goes out (`asyncio.timeout` fixes its end when made).
            async with gate.turn(slots.LANE.get(), self.one_slot, self.role) as timed:
                process.model_call_began()  # background work may start soon (runtime/process.py)
                # Around the client, not inside it: its retries and every provider are covered.
                deadline = asyncio.timeout(self.deadline)
                async with deadline:
                    reply = await attempts.retried(
                        lambda: runnable.ainvoke(sent, config), self.retries, seen
                    )
                # A retried call's time is not one answer's: it says nothing of the server.
                timed.tokens = 0 if reasons else _completion_tokens(reply)
                timed.prompt = _prompt_tokens(reply)
        except TimeoutError:
            if deadline is None or not deadline.expired():
                raise
            if reasons and set(reasons) == {"timeout"}:
                # Time-outs until the deadline: the last one cut short by it, not a trickle.
                raise model_errors.reply_timeout(
                    self.role, self.endpoint, self.timeout, len(reasons)
                ) from None
            raise ModelDeadlineError(
                f"The {self.role} model at {self.endpoint} did not finish one call within "
                f"{self.deadline:g} s, retries included. The server may be sending its reply "
                "very slowly or only keep-alives; if it is just slow (loading weights, a long "
                "report), raise LLM_CALL_DEADLINE."
            ) from None
        except Exception as error:
            # Scrubbed in place before it propagates: LangGraph stores a failed task's error
            # text in the checkpoint, and a server may echo the key it received.
            model_errors.scrub_error(error)
            translated = model_errors.readable(
                error, self.role, self.endpoint, self.spec, self.timeout, self.retries
            )
            if translated is None:
                raise
            raise translated from None
        if not isinstance(reply, AIMessage):
            raise TypeError(f"expected an AIMessage from the model, got {type(reply).__name__}")
        if self.ledger is not None:
            used = self.ledger.record(self.role, price, spending.reply_tokens(reply, sent, tools))
            # The live view adds these up: what the run has cost so far, call by call.
            progress.emit("model_call", role=self.role, model=self.spec, **used)
        return reply


def _completion_tokens(reply: object) -> int:
    return _usage(reply, "output_tokens")


def _prompt_tokens(reply: object) -> int:
    return _usage(reply, "input_tokens")


def _usage(reply: object, name: str) -> int:
    """A count from the reply's usage, as the server said it; 0 when missing or absurd."""
    usage = getattr(reply, "usage_metadata", None) or {}
    tokens = usage.get(name, 0)
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        return 0
    return tokens if 0 < tokens <= slots.MOST_TOKENS else 0


def _without_secrets(message: BaseMessage) -> BaseMessage:
    """`message` with its text scrubbed as sent; a reply's tool calls keep their arguments
    (a tool's own may be named like a secret), but not a lone surrogate, which no request's
    UTF-8 can carry."""
    update: dict[str, Any] = {}
    if (content := secrets.scrub(message.content)) != message.content:
        update["content"] = content
    if isinstance(message, AIMessage):
        calls = [without_surrogates_in(call) for call in message.tool_calls]
        if calls != message.tool_calls:
            update["tool_calls"] = calls
        invalid = [without_surrogates_in(call) for call in message.invalid_tool_calls]
        if invalid != message.invalid_tool_calls:
            update["invalid_tool_calls"] = invalid
    return message.model_copy(update=update) if update else message


def _chars(messages: Sequence[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)
