"""A role's model ready to call: `role_model(context, role)` gives a `RoleModel`.

The chat model itself is built in `llm.chat_models`; `RoleModel` gives every provider the
same call policy: a deadline around each call, retries where the client has none (each one
seen, `llm.attempts`), secrets scrubbed from what is sent and from errors, tracing tags,
readable errors (an unreachable server, a time-out, a server's error in one line, a too-long
request shortened and retried), a tool call cut at the completion limit asked again once,
and an empty reply nudged once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel
from typing_extensions import TypedDict

from deep_research.config.endpoints import read_endpoints
from deep_research.config.settings import Context
from deep_research.errors import ReadableError
from deep_research.llm import attempts, chat_models, init_chat, spending, toolcalls
from deep_research.llm import errors as model_errors
from deep_research.llm.chat_models import Role, public_url
from deep_research.llm.errors import ContextTooLongError, ModelDeadlineError
from deep_research.llm.errors import ModelEndpointError as ModelEndpointError
from deep_research.llm.errors import ModelServerError as ModelServerError
from deep_research.llm.errors import ReplyTimeoutError as ReplyTimeoutError
from deep_research.llm.prices import Price, price_of
from deep_research.llm.spending import Ledger
from deep_research.runtime import durable, progress, prompts, tracing
from deep_research.state import NO_USAGE, Usage
from deep_research.text import fences, limits, secrets

log = logging.getLogger(__name__)


class EmptyReplyError(ReadableError, RuntimeError):
    """The model returned nothing usable twice in a row, the second time after a nudge."""

    usage: Usage = NO_USAGE  # what the two requests used: still counted
    spent: int = 0


class CallLost(ReadableError, RuntimeError):
    """A step that ran before and was stopped had no saved answer for this call: it may have
    been sent and billed, so it was counted at its worst case (`micros`) and not sent again.
    The step runs again, fresh, and asks anew within what is left."""

    def __init__(self, micros: int) -> None:
        super().__init__(f"a model call in flight at a stop, counted at {micros} µUSD")
        self.micros = micros


class Answer(TypedDict):
    """One `ask` as its durable task stores it."""

    reply: AIMessage | None  # None: lost, it may have been sent before a stop
    usage: Usage
    spent: int  # µUSD its requests cost
    lost: int  # µUSD counted for a call that may have been sent before a stop


@dataclass(frozen=True)
class RoleModel:
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

    async def ask(
        self,
        messages: Sequence[BaseMessage],
        tools: Sequence[type[BaseModel]] = (),
        ledger: Ledger | None = None,
    ) -> AIMessage:
        """The model's reply, settled for small models (see `toolcalls`), never empty.

        Inside a graph step the call is a durable task (runtime/durable.py): answered before
        a stop, it is not sent again on resume. With a `ledger`, every request is admitted
        by it first and what the call used is added to it after. On a step that runs again
        after a stop (`ledger.fresh` false) under a budget, a call with no saved answer is
        not sent: it may have been billed, so it is counted at its worst case and
        `CallLost` tells the step to run again, fresh.
        """
        ledger = ledger if ledger is not None else Ledger(None)
        may_send = ledger.fresh or ledger.limit is None
        # The same request on a re-run, its prompt fenced again with new nonces, is the same call.
        texts = (fences.without_nonces(m.text) for m in messages)
        key = durable.digest(self.role, self.spec, *texts, *_names(tools))
        limit, counted = ledger.limit, ledger.counted
        try:
            answer = await durable.call(
                f"ask_{self.role}",
                key,
                lambda: self._answer(messages, tools, limit, counted, may_send),
            )
        except (spending.BudgetExceeded, EmptyReplyError) as stopped:
            # Raised inside the task, so it is not kept: a resume (with a bigger budget, a
            # fixed server) asks again. What was spent before it is in the error.
            ledger.absorb(stopped.usage, stopped.spent)
            raise
        ledger.absorb(answer["usage"], answer["spent"] + answer["lost"])
        if answer["reply"] is None:
            raise CallLost(answer["lost"])
        return answer["reply"]

    async def _answer(
        self,
        messages: Sequence[BaseMessage],
        tools: Sequence[type[BaseModel]],
        limit: int | None,
        counted: int,
        may_send: bool,
    ) -> Answer:
        """One `ask`, as the task stores it: the reply and what it used, or the worst case of a
        call that may have been sent before a stop."""
        if not may_send:
            # What the stopped call could have cost: never more than its ledger let it spend.
            lost = self.worst_case(messages, tools)
            if limit is not None:
                lost = max(0, min(lost, limit - counted))
            return Answer(reply=None, usage=NO_USAGE, spent=0, lost=lost)
        ledger = Ledger(limit, counted)
        try:
            reply = await self._ask_now(messages, tools, ledger)
        except (spending.BudgetExceeded, EmptyReplyError) as stopped:
            stopped.usage, stopped.spent = ledger.usage, ledger.spent
            raise
        return Answer(reply=reply, usage=ledger.usage, spent=ledger.spent, lost=0)

    def worst_case(self, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]]) -> int:
        """µUSD one `ask` may cost at most: a request bounded by its bytes, the whole reply at
        the completion limit, asked again once if that reply was a cut tool call, and the
        nudge an empty reply gets (the same prompt plus the nudge). Shortened retries are
        shorter; a request refused as too long is not billed."""
        price = self.price or price_of(self.spec)
        prompt = spending.prompt_bound(messages, tools)
        nudge = len(prompts.render("empty_reply").encode()) + spending.PER_MESSAGE_TOKENS
        completion = self.max_tokens or 0
        first = price.micros(prompt, completion) or 0
        return 2 * first + (price.micros(prompt + nudge, completion) or 0)

    async def _ask_now(
        self, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]], ledger: Ledger
    ) -> AIMessage:
        """The reply, asked now: a cut tool call is asked again once, an empty reply gets one
        nudge, and a second empty one raises `EmptyReplyError`."""
        held = dataclasses.replace(self, ledger=ledger)
        raw, sent = await held._fitted(messages, tools)
        if attempts.is_cut(raw) and attempts.calls_a_tool(raw):
            attempts.seen_cut(self.role, self.spec, raw, self.max_tokens, "retried")
            raw, sent = await held._fitted(sent, tools)
        if attempts.is_cut(raw):
            # A cut report or a cut call asked twice: used as it is, its `finish_reason` kept
            # in `response_metadata` for the node and the traffic log.
            attempts.seen_cut(self.role, self.spec, raw, self.max_tokens, "kept")
        reply = self._settled(raw, tools)
        if not toolcalls.is_empty(reply):
            return _unique_call_ids(reply)
        attempts.seen_retry(self.role, self.spec, 2, "empty", "an empty reply: nudged once")
        nudge = HumanMessage(prompts.render("empty_reply"))
        raw, _ = await held._fitted([*sent, nudge], tools)
        reply = self._settled(raw, tools)
        if toolcalls.is_empty(reply):
            raise EmptyReplyError(
                f"The {self.role} model at {self.endpoint} returned an empty reply twice, the "
                "second time after a nudge. Small models do this when a tool call is cut off: "
                "raise LLM_MAX_TOKENS, or check the server log for a dropped tool call."
            )
        return _unique_call_ids(reply)

    def _settled(self, raw: AIMessage, tools: Sequence[type[BaseModel]]) -> AIMessage:
        """`toolcalls.settle`, and a `model_repaired` event when it mended a tool call."""
        reply = toolcalls.settle(raw, tools)
        repair = attempts.repairs(raw, reply)
        if repair:
            progress.emit("model_repaired", role=self.role, model=self.spec, repair=repair)
        return reply

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
        # Around the client, not inside it: its retries and every provider are covered.
        deadline = asyncio.timeout(self.deadline)
        config = tracing.model_config(self.role, self.spec)

        reasons: list[attempts.RetryReason] = []

        def seen(attempt: int, reason: attempts.RetryReason, error: BaseException) -> None:
            model_errors.scrub_error(error)
            reasons.append(reason)
            attempts.seen_retry(self.role, self.spec, attempt, reason, attempts.error_line(error))

        try:
            async with deadline:
                reply = await attempts.retried(
                    lambda: runnable.ainvoke(sent, config), self.retries, seen
                )
        except TimeoutError:
            if not deadline.expired():
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


def _without_secrets(message: BaseMessage) -> BaseMessage:
    content = secrets.scrub(message.content)
    if content == message.content:
        return message
    return message.model_copy(update={"content": content})


def _names(tools: Sequence[type[BaseModel]]) -> list[str]:
    return [str(tool.model_json_schema().get("title", tool.__name__)) for tool in tools]


def _chars(messages: Sequence[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)


def _unique_call_ids(reply: AIMessage) -> AIMessage:
    """Give every tool call its own id: each must be answered by exactly one tool message."""
    seen: set[str] = set()
    calls = []
    for call in reply.tool_calls:
        call_id = call.get("id") or ""
        if not call_id or call_id in seen:
            call = {**call, "id": f"call_{uuid.uuid4().hex[:12]}"}
        seen.add(call["id"] or "")
        calls.append(call)
    if calls == reply.tool_calls:
        return reply
    return reply.model_copy(update={"tool_calls": calls})


def role_model(context: Context, role: Role, report: bool = False) -> RoleModel:
    """The configured model for `role`, ready to call; with `report`, for the call that
    writes the report, its completion limit sized to `report_length` (`report_tokens`)."""
    model = chat_models.chat_model(context, role, report)
    spec = getattr(context, f"{role}_model")
    endpoint = public_url(init_chat.base_url(model, spec.partition(":")[0]))
    endpoints = read_endpoints()
    retries = 0 if init_chat.retries_natively(model) else endpoints.llm_max_retries
    price = price_of(spec)
    limit = chat_models.completion_tokens(
        role,
        price,
        completion_limit(model),
        endpoints.llm_max_tokens,
        chat_models.report_tokens(context, role, report),
    )
    return RoleModel(
        model=model,
        endpoint=endpoint,
        role=role,
        spec=spec,
        deadline=endpoints.call_deadline,
        retries=retries,
        price=price,
        max_tokens=limit,
        timeout=endpoints.llm_timeout,
    )


def completion_limit(model: BaseChatModel) -> int | None:
    """The completion limit the client sends (OpenAI's, Anthropic's `max_tokens`), if any."""
    for name in ("max_tokens", "max_completion_tokens", "num_predict"):
        value = getattr(model, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
