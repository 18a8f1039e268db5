"""The orchestrator's tool names are one vocabulary: its schemas and examples use exactly it."""

from __future__ import annotations

from typing import get_args

from langchain_core.utils.function_calling import convert_to_openai_tool

from deep_research.nodes import planning, tool_names
from deep_research.nodes.tool_names import ToolName


def test_the_constants_are_the_tool_names() -> None:
    assert {tool_names.RESEARCH, tool_names.WRITE_TODOS} == set(get_args(ToolName))


def test_the_orchestrators_tools_and_examples_are_named_by_the_vocabulary() -> None:
    names = [convert_to_openai_tool(tool)["function"]["name"] for tool in planning.TOOLS]
    assert sorted(names) == sorted(get_args(ToolName)) == sorted(planning.EXAMPLES)
