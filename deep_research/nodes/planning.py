"""What a planning call of the orchestrator sends: its tools, its system prompt (the report's
rules once research came back, similar earlier reports from memory) and the thread's messages."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator

from deep_research import search as search_service
from deep_research.config.settings import Context
from deep_research.nodes import report_form
from deep_research.runtime import prompts
from deep_research.state import RESEARCH, WRITE_TODOS, ResearchState
from deep_research.text import fences
from deep_research.text.topics import topic_key


class Research(BaseModel):
    """One focused topic for a researcher."""

    model_config = ConfigDict(title=RESEARCH, str_strip_whitespace=True)
    topic: str = Field(min_length=3, description="One sentence")


SCHOLARLY = "true: papers, drugs, definitions"  # the topic wants more than the web


def _no_default(schema: dict[str, Any]) -> None:
    """Leaving the field out is the default: the schema, sent each call, need not say so."""
    schema.pop("default", None)


class ScholarlyResearch(Research):
    """One focused topic for a researcher."""

    # Whether the topic's researcher is offered the scholarly sources (`search.AUTO_OFFERS`),
    # asked once here for the topic rather than described in every researcher call, in few
    # characters (docs/speed.md, the prompt's size). Read leniently by `dispatch.scholarly`:
    # no value makes the topic's call invalid.
    scholarly: bool = Field(default=False, description=SCHOLARLY, json_schema_extra=_no_default)


class TodoItem(BaseModel):
    # No descriptions or default: the names, the enum and `required` say it, and the
    # schema goes with every call.
    content: str = Field(min_length=1)
    status: Literal["pending", "in_progress", "completed"] = Field(
        default="pending", json_schema_extra=_no_default
    )


class WriteTodos(BaseModel):
    """Record the plan; replaces the previous list."""

    model_config = ConfigDict(title=WRITE_TODOS)
    todos: list[TodoItem] = Field(description="The whole plan")

    @field_validator("todos")
    @classmethod
    def _each_once(cls, todos: list[TodoItem]) -> list[TodoItem]:
        # A small model often lists an item twice: the plan keeps its first (`topic_key`).
        kept: dict[str, TodoItem] = {}
        for todo in todos:
            kept.setdefault(topic_key(todo.content), todo)
        return list(kept.values())


EXAMPLES = {
    RESEARCH: 'research({"topic": "Cost of recycled vs mined lithium in 2025"})',
    WRITE_TODOS: 'write_todos({"todos": [{"content": "Research costs", "status": "pending"}]})',
}


def tools(context: Context) -> list[type[BaseModel]]:
    """The orchestrator's tools: `research` asks whether a topic is scholarly when the run
    offers scholarly sources (`search.offers_scholarly`)."""
    scholarly = search_service.offers_scholarly(context)
    return [WriteTodos, ScholarlyResearch if scholarly else Research]


def planning_messages(state: ResearchState, context: Context) -> list[BaseMessage]:
    """What a planning call sends, beside its `tools`."""
    system = (
        prompts.render(
            "orchestrator",
            max_researchers=context.max_researchers_per_turn,
            max_calls=context.max_research_calls_per_reply,
            max_turns=context.max_orchestrator_turns,
            max_searches=context.max_searches_per_run,
        )
        + report_rules(state, context)
        + earlier_reports(state)
    )
    return [SystemMessage(system), *state["messages"]]


def report_rules(state: ResearchState, context: Context) -> str:
    """How to write the report, and the reader's wishes for it, once there are findings to
    write it from: the planning replies before any research came back do without (one
    stable prompt for each phase)."""
    researched = any(isinstance(m, ToolMessage) and m.name == RESEARCH for m in state["messages"])
    if not researched:
        return ""
    return f"\n\n{prompts.render('orchestrator_report')}\n\n{report_form.wishes(state, context)}"


def earlier_reports(state: ResearchState) -> str:
    """Similar reports from memory (see `recall.recall`), each fenced: stored web text."""
    reports = state.get("earlier_reports") or []
    if not reports:
        return ""
    nonce = fences.new_nonce()
    listing = "\n\n".join(
        f"From {r['date']} (thread {r['thread_id']}, similarity {r['similarity']:.2f}):\n"
        + fences.fence(f"Question: {r['question']}\n\n{r['excerpt']}", nonce)
        for r in reports
    )
    return "\n\n" + prompts.render("earlier_reports", reports=listing)
