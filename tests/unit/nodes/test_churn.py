"""nodes.churn: the guard that locks todo updates and refuses a call repeated reply after reply."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolCall

from deep_research.config.settings import Context
from deep_research.nodes.churn import after_reply, fresh, signature
from deep_research.state import WRITE_TODOS, ChurnGuard

CONTEXT = Context(max_todo_updates=3, max_todo_only_turns=2, max_repeated_calls=3)
_ids = iter(range(1_000_000))


def _call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, id=f"c{next(_ids)}", type="tool_call")


def _todo() -> ToolCall:
    return _call(WRITE_TODOS, todos=["a"])


def _replies(*replies: list[ToolCall], context: Context = CONTEXT) -> list[ChurnGuard]:
    guard: ChurnGuard | None = None
    guards = []
    for calls in replies:
        guard = after_reply(guard, calls, context)
        guards.append(guard)
    return guards


def test_a_fresh_guard_refuses_nothing() -> None:
    assert fresh() == after_reply(None, [], CONTEXT)
    assert fresh()["refused"] == {} and not fresh()["todos_locked"]


def test_signature_ignores_key_order_but_not_values() -> None:
    a = _call("research", topic="x", depth=1)
    b = ToolCall(name="research", args={"depth": 1, "topic": "x"}, id="other", type="tool_call")
    assert signature(a) == signature(b)
    assert signature(a) != signature(_call("research", topic="y", depth=1))
    assert signature(_call("t", when=object())).startswith("t:")  # any value is written out


def test_a_research_call_s_scholarly_flag_does_not_make_it_another_call() -> None:
    """Turning the flag is no way round the repeat guard: the topic is what repeats."""
    marked = _call("research", topic="x", scholarly=True)
    assert signature(marked) == signature(_call("research", topic="x"))
    assert signature(marked) != signature(_call("research", topic="y", scholarly=True))
    assert signature(_call("other", topic="x", scholarly=True)) != signature(
        _call("other", topic="x")
    )
    guards = _replies(*[[_call("research", topic="x", scholarly=n % 2 == 0)] for n in range(3)])
    assert list(guards[-1]["refused"].values()) == ["repeated"]


def test_replies_of_only_todos_lock_the_todos_after_the_limit() -> None:
    first, second, third = _replies([_todo()], [_todo()], [t := _todo()])
    assert not first["todos_locked"] and first["todo_only_turns"] == 1
    assert second["todos_locked"] and second["refused"] == {}  # locked from now on
    assert third["refused"] == {t["id"]: "locked"}


def test_a_reply_that_acts_resets_the_todo_only_count() -> None:
    guards = _replies([_todo()], [_call("research", topic="a")], [_todo()])
    assert [g["todo_only_turns"] for g in guards] == [1, 0, 1]
    assert not any(g["todos_locked"] for g in guards)


def test_todo_calls_past_the_total_are_refused_in_the_same_reply() -> None:
    context = Context(max_todo_updates=2, max_todo_only_turns=10, max_repeated_calls=10)
    calls = [_call(WRITE_TODOS, todos=[str(n)]) for n in range(3)]
    [guard] = _replies([*calls, _call("research", topic="a")], context=context)
    assert guard["refused"] == {calls[2]["id"]: "locked"} and guard["todos_locked"]


def test_a_call_repeated_in_consecutive_replies_is_refused() -> None:
    same = {"topic": "heat pumps"}
    guards = _replies(*[[_call("research", **same)] for _ in range(3)])
    assert [g["refused"] for g in guards[:2]] == [{}, {}]
    [(refused_id, why)] = guards[2]["refused"].items()
    assert why == "repeated" and refused_id.startswith("c")


def test_twice_in_one_reply_is_not_a_loop_and_a_break_resets_the_streak() -> None:
    twice = [_call("research", topic="x"), _call("research", topic="x")]
    guards = _replies(twice, twice, [_call("research", topic="y")], twice, twice)
    assert all(g["refused"] == {} for g in guards)
    assert guards[-1]["streaks"] == {signature(twice[0]): 2}


def test_the_guard_it_returns_is_a_new_one() -> None:
    before = fresh()
    after_reply(before, [_todo(), _call("research", topic="x")], CONTEXT)
    assert before == fresh()
