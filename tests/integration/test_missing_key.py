"""A role naming a cloud provider whose key is missing stops before anything is written."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.cli.main import main
from deep_research.config.names import ConfigError
from deep_research.config.settings import Context
from deep_research.graph import builder
from tests.support.cli import QUESTION
from tests.support.scripted_model import Script, ScriptedChatModel
from tests.support.search import ScriptedSearch


def never_called(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
    raise AssertionError("no model may be called with a configuration that cannot work")


@pytest.mark.parametrize(
    ("context", "environment"),
    [
        ({"researcher_model": "openai:gpt-4.1"}, {}),
        ({}, {"ORCHESTRATOR_MODEL": "openai:gpt-4.1"}),
    ],
    ids=["per-run", "environment"],
)
async def test_python_api_refuses_a_cloud_role_without_its_key_before_any_checkpoint(
    context: dict[str, Any],
    environment: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    use_script: Callable[[Script], ScriptedChatModel],
    scripted_search: ScriptedSearch,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    model = use_script(never_called)
    saver = InMemorySaver()
    graph = builder.compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "t1"}}
    user = {"role": "user", "content": QUESTION}
    with pytest.raises(ConfigError) as error:
        await graph.ainvoke({"messages": [user]}, config, context=context)
    [line] = str(error.value).splitlines()
    assert "needs OPENAI_API_KEY" in line and "openai:gpt-4.1" in line
    assert await saver.aget_tuple(config) is None, "no checkpoint was written"
    assert (await graph.aget_state(config)).values == {}
    assert not model.calls and not scripted_search.queries


def test_context_accepts_a_cloud_role_once_its_key_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    assert Context(researcher_model="openai:gpt-4.1").researcher_model == "openai:gpt-4.1"


@pytest.mark.parametrize(
    "flags",
    [["--model", "openai:gpt-4.1"], ["--set", "researcher_model=openai:gpt-4.1"]],
    ids=["model", "set"],
)
def test_cli_refuses_a_cloud_role_without_its_key_before_writing_anything(
    flags: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert main([*flags, QUESTION]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("deep-research: Invalid configuration: ")
    assert "needs OPENAI_API_KEY" in line or "need OPENAI_API_KEY" in line
    assert not (tmp_path / ".deep_research").exists(), "no checkpoint, no traffic log"
    assert not (tmp_path / "reports").exists()
