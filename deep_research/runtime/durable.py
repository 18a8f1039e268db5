"""Paid and slow calls as LangGraph tasks: a call answered before a stop is never sent again.

Inside a graph step, `call(kind, key, send)` runs `send` as a `langgraph.func.task`. A task's
result is written to the checkpoint when it returns; when a stopped run resumes, its step
runs again from its first line, and each call that had been answered returns its saved
result without running (LangGraph's own answer to "a side effect happens once"). Only
what was in flight at the stop runs again.

LangGraph tells a step's tasks apart by their name and the order in which the step calls
them, so a step starts its calls in an order its state and earlier answers fix (never in
the order concurrent work happens to reach them), and the name carries a digest of what
the call asks: a call whose place moved is sent again rather than handed another's answer.

A result must be what the checkpointer can store: dicts, lists, strings, numbers and
LangChain messages. Outside a graph step (a unit test, `doctor`) the call simply runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from langgraph.config import get_config
from langgraph.func import task

T = TypeVar("T")


def digest(*parts: str) -> str:
    """A short name-safe digest of what a call asks (its query, URL or prompt)."""
    hashed = hashlib.blake2b(digest_size=8)
    for part in parts:
        hashed.update(part.encode("utf-8", "surrogatepass"))
        hashed.update(b"\0")
    return hashed.hexdigest()


def in_step() -> bool:
    """Whether the caller runs inside a graph step, where tasks are kept."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # not inside any runnable
        return False
    # A step's config carries the checkpoint namespace of its task; a plain runnable's not.
    return "checkpoint_ns" in configurable


def call(kind: str, key: str, send: Callable[[], Awaitable[T]]) -> Awaitable[T]:
    """`send()`, as a task named `kind` and the digest `key` (see the module's doc).

    The task is started when this is called, not when it is awaited: a step that starts
    several calls at once starts them in the order it calls this."""
    if not in_step():
        return send()

    # A function of its own each time: `task(name=...)` renames the function it is given,
    # and langgraph keeps one runnable per module-level function, so a shared one would run
    # every call under the first call's name, and a new process would name them otherwise.
    async def run(send: Callable[[], Awaitable[Any]]) -> Any:
        return await send()

    named: Any = task(name=f"{kind}_{key}")
    durable: Any = named(run)
    return durable(send)  # type: ignore[no-any-return]


def thread_id(default: str = "") -> str:
    """The run's thread, which a step's hand-over is keyed by (runtime/process.py)."""
    try:
        found = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:
        found = None
    return str(found) if found else default


def top_scope() -> tuple[str, str]:
    """The top-level steps' hand-over scope, beside each researcher's (runtime/process.py)."""
    return thread_id(), ""
