"""`answer_tools`: every call of a planning reply that is not a valid research call answered
(todos saved, mistakes and refusals explained), so each tool call gets exactly one answer."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from pydantic import ValidationError

from deep_research.llm.toolcalls import invalid_arguments
from deep_research.nodes import churn, dispatch
from deep_research.nodes.planning import EXAMPLES, Research, WriteTodos
from deep_research.runtime import progress, prompts
from deep_research.state import RESEARCH, WRITE_TODOS, ResearchState, Todo


def answer_tools(state: ResearchState) -> dict[str, Any]:
    """Answer every call that is not a valid research call: todos, mistakes, unknown tools."""
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    ran = len(dispatch.runnable_research(state, last))
    guard = state.get("churn", churn.fresh())
    messages: list[ToolMessage] = []
    update: dict[str, Any] = {}
    for call in last.tool_calls:
        call_id = call.get("id") or ""
        name = call["name"]
        refusal = guard["refused"].get(call_id)
        if refusal is not None:
            messages.append(_refused(call_id, name, refusal, ran))
        elif name == RESEARCH:
            try:
                Research.model_validate(call["args"])
            except ValidationError as error:
                messages.append(_error(call_id, name, invalid_arguments(call["args"], error)))
        elif name == WRITE_TODOS and ran:
            # The documented rule for a mixed reply: research runs, the plan stays unchanged.
            messages.append(
                _error(
                    call_id,
                    name,
                    "Not applied: call write_todos alone, not in "
                    "the same reply as research. The research calls were run.",
                )
            )
        elif name == WRITE_TODOS:
            try:
                todos = WriteTodos.model_validate(call["args"]).todos
            except ValidationError as error:
                messages.append(_error(call_id, name, invalid_arguments(call["args"], error)))
                continue
            update["todos"] = [Todo(content=t.content, status=t.status) for t in todos]
            progress.emit("todos", todos=update["todos"])
            # The plan is in the call's own arguments, which the model keeps: not repeated.
            saved = f"Plan saved ({len(todos)} todos)."
            if guard["todos_locked"]:  # this update locked the plan: say what to do instead
                saved += f"\n\n{prompts.render('plan_locked')} Example: {EXAMPLES['research']}"
            messages.append(ToolMessage(saved, tool_call_id=call_id, name=name))
        else:
            messages.append(
                _error(call_id, name, f"Unknown tool {name!r}. Tools: research, write_todos.")
            )
    return {**update, "messages": messages}


def _refused(call_id: str, name: str, refusal: str, ran: int) -> ToolMessage:
    """A call the churn guard or the per-reply limit stopped: nothing ran, no state changed."""
    if refusal == "over_limit":  # refused only when the first `ran` calls filled the limit
        text = prompts.render("research_limit", limit=ran)
        example = EXAMPLES[RESEARCH]
    elif refusal == "locked":
        text = f"Plan locked: this update was not saved. {prompts.render('plan_locked')}"
        example = EXAMPLES[RESEARCH]
    else:
        text = prompts.render("repeated_call")
        example = EXAMPLES.get(name, EXAMPLES[RESEARCH])
    return ToolMessage(
        f"{text} Example: {example}", tool_call_id=call_id, name=name, status="error"
    )


def _error(call_id: str, name: str, text: str) -> ToolMessage:
    example = EXAMPLES.get(name, EXAMPLES[RESEARCH])
    return ToolMessage(
        f"{text} Example: {example}", tool_call_id=call_id, name=name, status="error"
    )
