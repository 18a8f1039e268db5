"""Bad user input through the Python API: resume values of any depth, size or type, and
inputs that hold no question. Each gets a clear answer and leaves the thread usable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from deep_research.graph import builder
from deep_research.nodes.clarify import ANSWER_SHAPES, SHOWN_CHARS
from deep_research.nodes.question import EmptyQuestionError
from tests.support.graph_scripts import NO_CLARIFY, orchestrator_fanning_out, script_for
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

QUESTION = {"messages": [{"role": "user", "content": "heat pumps in the cold"}]}


def asking_script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
    """A clarifier that asks until it is answered; the rest as in the graph scripts."""
    if not tools and "intake step" in str(messages[0].content):
        if any("Nordic" in str(m.content) for m in messages):
            return AIMessage('{"need_clarification": false, "verification": "Researching."}')
        return AIMessage('{"need_clarification": true, "questions": ["Which climate?"]}')
    return script_for(orchestrator_fanning_out("alpha"))(messages, tools)


class KeepTooDeep(JsonPlusSerializer):
    """LangGraph's serializer, but what msgpack cannot encode is kept as it is, in memory.

    msgpack refuses values nested deeper than 255 levels before the graph sees them; with
    this serializer the graph's own handling of any value is what is tested.
    """

    def __init__(self) -> None:
        super().__init__()
        self.kept: dict[bytes, Any] = {}

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        try:
            return super().dumps_typed(obj)
        except TypeError:  # "Recursion limit reached"
            key = str(len(self.kept)).encode()
            self.kept[key] = obj
            return "kept", key

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        if data[0] == "kept":
            return self.kept[data[1]]
        return super().loads_typed(data)


def nested(depth: int, shape: str) -> Any:
    """A value `depth` levels deep, built without recursion."""
    value: Any = "Nordic"
    for _ in range(depth):
        value = {"answer": value} if shape == "dict" else [value]
    return value


@dataclass
class Unprintable:
    """A resume value whose own `repr` fails (msgpack stores dataclasses field by field)."""

    answer: str = "Nordic"

    def __repr__(self) -> str:
        raise ValueError("no repr for you")


async def _ask(graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig) -> None:
    out = await graph.ainvoke(QUESTION, config)
    assert out["__interrupt__"][0].value["questions"] == ["Which climate?"]


async def _answered_then_finished(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig, value: Any
) -> None:
    """`value` gets a new interrupt with a bounded error; a good answer then finishes."""
    out = await graph.ainvoke(Command(resume=value), config)
    interrupt = out["__interrupt__"][0].value
    assert interrupt["questions"] == ["Which climate?"]
    assert ANSWER_SHAPES in interrupt["error"]
    assert len(interrupt["error"]) < SHOWN_CHARS + 100 + len(ANSWER_SHAPES)
    out = await graph.ainvoke(Command(resume="Nordic"), config)
    assert out["final_report"]


@pytest.mark.parametrize("shape", ["dict", "list"])
@pytest.mark.parametrize("depth", [1_000, 100_000])
async def test_resume_value_nested_deeper_than_python_recursion_gets_a_new_interrupt(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    depth: int,
    shape: str,
) -> None:
    use_script(asking_script)
    graph = builder.compile(checkpointer=InMemorySaver(serde=KeepTooDeep()))
    config: RunnableConfig = {"configurable": {"thread_id": "deep"}}
    await _ask(graph, config)
    await _answered_then_finished(graph, config, nested(depth, shape))


@pytest.mark.parametrize(
    "value",
    [list(range(1_000_000)), {"answer": "x" * 5_000_000, "extra": 1}, Unprintable()],
    ids=["a million items", "a 5 MB answer beside an extra key", "a failing repr"],
)
async def test_huge_or_odd_resume_value_gets_a_new_interrupt(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch, value: Any
) -> None:
    use_script(asking_script)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "odd"}}
    await _ask(graph, config)
    await _answered_then_finished(graph, config, value)


async def test_resume_value_too_deep_for_the_checkpointer_leaves_the_thread_at_its_question(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    """LangGraph's own serializer refuses it (TypeError) before any node: nothing is lost."""
    model = use_script(asking_script)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "too-deep"}}
    await _ask(graph, config)
    calls = len(model.calls)
    with pytest.raises(TypeError, match="Recursion limit"):
        await graph.ainvoke(Command(resume=nested(1_000, "dict")), config)
    assert len(model.calls) == calls
    assert (await graph.aget_state(config)).next == ("ask_user",)
    out = await graph.ainvoke(Command(resume="Nordic"), config)
    assert out["final_report"]


NO_QUESTION = {
    "an empty question": {"messages": [{"role": "user", "content": ""}]},
    "a whitespace question": {"messages": [{"role": "user", "content": "  \n\t "}]},
    "an empty input": {},
    "no messages": {"messages": []},
    "no user message": {"messages": [{"role": "assistant", "content": "Research heat pumps."}]},
}


@pytest.mark.parametrize("value", list(NO_QUESTION.values()), ids=list(NO_QUESTION))
async def test_input_without_a_question_is_refused_before_any_model_call_or_search(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch, value: Any
) -> None:
    model = use_script(script_for(orchestrator_fanning_out("alpha")))
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "blank"}}
    with pytest.raises(EmptyQuestionError, match="no question.*user message with text"):
        await graph.ainvoke(value, config, context=NO_CLARIFY)
    assert model.calls == [] and scripted_search.queries == []
    # The thread is not stuck: a real question then runs, and no model sees the blank one.
    good = {"messages": [{"role": "user", "content": "Are heat pumps worth it in Norway?"}]}
    out = await graph.ainvoke(good, config, context=NO_CLARIFY)
    assert out["final_report"] and model.calls
    sent = [m for messages, _ in model.calls for m in messages if isinstance(m, HumanMessage)]
    assert sent and all(m.text.strip() for m in sent)


async def test_input_without_a_question_does_not_rerun_the_threads_last_question(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(orchestrator_fanning_out("alpha")))
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "answered"}}
    await graph.ainvoke(QUESTION, config, context=NO_CLARIFY)
    calls, searches = len(model.calls), len(scripted_search.queries)
    for value in NO_QUESTION.values():
        with pytest.raises(EmptyQuestionError):
            await graph.ainvoke(value, config, context=NO_CLARIFY)
    assert len(model.calls) == calls and len(scripted_search.queries) == searches
