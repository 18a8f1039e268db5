"""The orchestrator's churn guard: small models re-plan instead of acting, or repeat a call.

After `max_todo_only_turns` consecutive replies that only update todos, or once
`max_todo_updates` todo calls were made, todo updates are locked for the run: later ones
are refused without touching the plan. A call made with the same arguments in
`max_repeated_calls` consecutive replies is refused too. The guard decides when the reply
arrives; routing and `answer_tools` only obey its `refused` verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import ToolCall

from deep_research.config.settings import Context
from deep_research.state import RESEARCH, WRITE_TODOS, ChurnGuard

Refusal = Literal["locked", "repeated"]


def fresh() -> ChurnGuard:
    return ChurnGuard(todo_calls=0, todo_only_turns=0, todos_locked=False, streaks={}, refused={})


def signature(call: ToolCall) -> str:
    """Name and arguments, independent of key order; a research call's `scholarly` flag
    left out (the same topic asked again with the flag turned is the same call)."""
    args = call["args"]
    if call["name"] == RESEARCH and isinstance(args, dict):
        args = {key: value for key, value in args.items() if key != "scholarly"}
    return f"{call['name']}:{json.dumps(args, sort_keys=True, default=str)}"


def after_reply(
    guard: ChurnGuard | None, calls: Sequence[ToolCall], context: Context
) -> ChurnGuard:
    """The guard updated with the orchestrator's latest reply, and the calls it refuses."""
    before = guard or fresh()
    refused: dict[str, Refusal] = {}
    todo_calls = before["todo_calls"]
    for call in calls:
        if call["name"] == WRITE_TODOS:
            todo_calls += 1
            if before["todos_locked"] or todo_calls > context.max_todo_updates:
                refused[call.get("id") or ""] = "locked"
    only_todos = bool(calls) and all(call["name"] == WRITE_TODOS for call in calls)
    todo_only_turns = before["todo_only_turns"] + 1 if only_todos else 0
    # Counted once per reply: two identical calls in one reply are not a loop.
    streaks = {sig: before["streaks"].get(sig, 0) + 1 for sig in {signature(c) for c in calls}}
    for call in calls:
        if streaks[signature(call)] >= context.max_repeated_calls:
            refused.setdefault(call.get("id") or "", "repeated")
    return ChurnGuard(
        todo_calls=todo_calls,
        todo_only_turns=todo_only_turns,
        todos_locked=before["todos_locked"]
        or todo_only_turns >= context.max_todo_only_turns
        or todo_calls >= context.max_todo_updates,
        streaks=streaks,
        refused=dict(refused),
    )
