"""A model step's worst case, counted in checkpointed state before the step sends anything.

Under `max_cost_usd`, each step that calls a model (the clarifier, the orchestrator, a
researcher's turn) is preceded by a reserve step. It counts the call's worst case against
the budget and stores a `CallReservation`; with durability "sync" that checkpoint is on
disk before the call step starts. The call step spends within the reservation (its
`Ledger` admits each request against it) and settles it to what its replies really cost.

A call step that finds its reservation already used (the step ran before and died: a
crash, SIGKILL, Ctrl-C) does not send: the provider may have billed the lost call, so its
reservation stays counted, and the step goes back to reserve again. The search cap works
the same way (search/budget.py), and shares its marker of started steps (runtime/process).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from pydantic import BaseModel

from deep_research.errors import ReadableError
from deep_research.llm import spending
from deep_research.llm.models import RoleModel
from deep_research.llm.prices import price_of
from deep_research.runtime import process, prompts
from deep_research.state import CallReservation

# langgraph's configurable key for the run's durability (`CONFIG_KEY_DURABILITY`, not public).
DURABILITY_KEY = "__pregel_durability"
SAVE_POLL_SECONDS = 0.01
SAVE_POLLS = 3_000  # 30 s: a checkpointer slower than that fails the step, unsent


class UnsavedReservationError(ReadableError, RuntimeError):
    """The checkpoint never showed a model call's reservation: the call was not sent."""


# A reservation no step may use: what a call step leaves in state when it found none
# usable, so its route goes back to the reserve step (which replaces it).
UNUSABLE = CallReservation(id="", process="", micros=0)


def new(micros: int) -> CallReservation:
    return CallReservation(id=uuid.uuid4().hex, process=process.PROCESS_ID, micros=max(0, micros))


def usable(reservation: CallReservation | None) -> bool:
    """Only on the first start of its step in the process that made it (as `may_send`)."""
    if reservation is None or reservation["process"] != process.PROCESS_ID:
        return False
    return process.start_reservation(reservation["id"])


def pending(reservation: CallReservation | None) -> bool:
    """Whether the step after a call step must be its reserve step: the call step did not
    settle (it found its reservation unusable and sent nothing)."""
    return reservation is not None


def worst_of(model: RoleModel, prompt_tokens: int) -> int:
    """µUSD one `ask` may cost at most: a request of `prompt_tokens`, the whole reply at the
    completion limit, and the nudge an empty reply gets (the same prompt plus the nudge).
    Shortened retries are shorter, and a request refused as too long is not billed. An
    unknown price counts 0 here: the call step's ledger refuses it with a clear error."""
    price = model.price or price_of(model.spec)
    nudge = len(prompts.render("empty_reply").encode()) + spending.PER_MESSAGE_TOKENS
    completion = model.max_tokens or 0
    first = price.micros(prompt_tokens, completion) or 0
    return first + (price.micros(prompt_tokens + nudge, completion) or 0)


def worst_case(
    model: RoleModel, messages: Sequence[BaseMessage], tools: Sequence[type[BaseModel]] = ()
) -> int:
    """`worst_of` the request these messages and tools make (bounded by their bytes)."""
    return worst_of(model, spending.prompt_bound(messages, tools))


def reserve(limit: int | None, counted: int, worst: int) -> CallReservation | None:
    """The reservation for a step of `worst` µUSD: what is left of `limit` at most (the
    step's ledger refuses a request that does not fit). None without a budget."""
    if limit is None:
        return None
    return new(min(max(0, limit - counted), worst))


@dataclass
class StepBudget:
    """A call step's budget: its ledger, and the reservation it settles when it ends."""

    ledger: spending.Ledger
    reserved: int  # µUSD the reserve step counted, given back when the step settles

    def settled(self) -> dict[str, Any]:
        """What a top-level call step adds to state: its calls, their cost in place of the
        reservation, and no reservation left."""
        return {
            "usage": self.ledger.usage,
            "cost_counted": self.ledger.spent - self.reserved,
            "call_reservation": None,
        }

    def cost_after(self, counted: int) -> int:
        """A research task's `cost` after this step, from its `counted` (with the reservation)."""
        return counted + self.ledger.spent - self.reserved


def open_step(
    limit: int | None, counted: int, reservation: CallReservation | None
) -> StepBudget | None:
    """The budget a call step spends under, from what state counts (its reservation
    included); None when it may not send, since it has no usable reservation.

    Without a budget a step always sends; a usable reservation (a budget set in an earlier
    session) is still given back, an unusable one stays counted."""
    fresh = usable(reservation)
    reserved = reservation["micros"] if fresh and reservation is not None else 0
    if limit is None:
        return StepBudget(spending.Ledger(None, counted - reserved), reserved)
    if not fresh:
        return None
    # The step may spend what was reserved for it, no more: state already counts it.
    return StepBudget(spending.Ledger(counted, counted - reserved), reserved)


def declined(reservation: CallReservation | None) -> CallReservation:
    """What a call step that may not send leaves in state: its route reserves again."""
    return reservation if reservation is not None else UNUSABLE


async def saved(reservation: CallReservation | None) -> None:
    """Wait until the thread's checkpoint holds `reservation`, when the run writes its
    checkpoints in the background (durability "async", the Agent Server's default): the
    call must not go out before its reservation is stored. With "sync" (the CLI, the MCP
    tool, every research subgraph) it already is; with "exit" nothing is stored mid-run."""
    if reservation is None:
        return
    configurable = get_config().get("configurable", {})
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER)
    # langgraph names the durability in the config only when the caller chose one; its
    # default, as in a notebook's ainvoke or Aegra's runs, is "async".
    if configurable.get(DURABILITY_KEY, "async") != "async" or saver is None:
        return
    # The step's own namespace is its graph's plus "|node:task"; the checkpoint is the graph's.
    graph_ns = str(configurable.get("checkpoint_ns", "")).rpartition("|")[0]
    where = {
        "configurable": {"thread_id": configurable.get("thread_id"), "checkpoint_ns": graph_ns}
    }
    for _ in range(SAVE_POLLS):
        found = await saver.aget_tuple(where)
        stored = found.checkpoint["channel_values"].get("call_reservation") if found else None
        if isinstance(stored, dict) and stored.get("id") == reservation["id"]:
            return
        await asyncio.sleep(SAVE_POLL_SECONDS)
    raise UnsavedReservationError(
        f"The run's checkpointer did not store a model call's reservation within "
        f"{SAVE_POLLS * SAVE_POLL_SECONDS:g} s, so the call was not sent (max_cost_usd could "
        "not be held). Resume the thread once the checkpointer answers."
    )
