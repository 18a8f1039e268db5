"""A role's model ready to call: `role_model(context, role)` gives a `RoleModel`.

The chat model itself is built in `llm.chat_models`; `RoleModel` gives every provider the
same call policy: a deadline around each call, retries where the client has none (each one
seen, `llm.attempts`), secrets scrubbed from what is sent and from errors, tracing tags,
readable errors (an unreachable server, a time-out, a server's error in one line, a too-long
request shortened and retried), a tool call cut at the completion limit asked again once,
and an empty reply nudged once.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel
from typing_extensions import TypedDict

from deep_research.config.endpoints import read_endpoints
from deep_research.config.settings import Context
from deep_research.errors import ReadableError
from deep_research.llm import attempts, chat_models, init_chat, spending, toolcalls
from deep_research.llm.chat_models import Role, public_url
from deep_research.llm.errors import ModelEndpointError as ModelEndpointError
from deep_research.llm.errors import ModelServerError as ModelServerError
from deep_research.llm.errors import ReplyTimeoutError as ReplyTimeoutError
from deep_research.llm.prices import FREE_PROVIDERS, price_of
from deep_research.llm.sending import Sender
from deep_research.llm.spending import Ledger
from deep_research.runtime import durable, progress, prompts
from deep_research.state import NO_USAGE, Usage
from deep_research.text import fences

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
class RoleModel(Sender):
    """A role's chat model with the call policy: each `ask` durable, held to its ledger,
    settled for small models, never empty (its requests are `Sender`'s)."""

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


def _names(tools: Sequence[type[BaseModel]]) -> list[str]:
    return [str(spending.tool_schema(tool).get("title", tool.__name__)) for tool in tools]


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
    provider = spec.partition(":")[0]
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
        # Watched for one slot only where a server of the user's own answers (llm/slots.py).
        one_slot=context.one_slot_server
        if provider in FREE_PROVIDERS or context.one_slot_server == "on"
        else "off",
    )


def completion_limit(model: BaseChatModel) -> int | None:
    """The completion limit the client sends (OpenAI's, Anthropic's `max_tokens`), if any."""
    for name in ("max_tokens", "max_completion_tokens", "num_predict"):
        value = getattr(model, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
