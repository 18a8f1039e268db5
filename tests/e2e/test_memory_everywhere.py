"""One memory per user: with MEMORY_DIR unset, CLI runs from two folders and the notebook
in a third (the Python API) find each other's research in the user's data directory, and a
question asked in all three leaves one report naming the three threads."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.support.brain import ResearchBrain
from tests.support.cli import QUESTION, REPO, cli_env, default_memory, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # subprocesses and a notebook kernel

STARTED = re.compile(r"Thread (\w+) · resume with")
NOTEBOOK_THREAD = "quickstart"  # examples/quickstart.ipynb's thread id


def line_with(text: str, marker: str) -> str:
    return next(line for line in text.splitlines() if marker in line)


def test_two_folders_and_the_notebook_share_one_memory(tmp_path: Path) -> None:
    home, one, two, examples, three = (
        tmp_path / name for name in ("home", "one", "two", "ex", "3")
    )
    for folder in (one, two, examples, three):
        folder.mkdir(parents=True)
    memory = default_memory(home)
    assert memory.is_relative_to(home)  # the user's, not a working directory's
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = {**cli_env(llm, tavily, home), "USE_MEMORY": "true", "FETCH_TOP_N": "0"}
        assert "MEMORY_DIR" not in env and "XDG_DATA_HOME" not in env
        first = run_cli(one, env, "--no-clarify", QUESTION)
        assert first.returncode == 0, first.stderr
        second = run_cli(two, env, "--no-clarify", QUESTION)
        assert second.returncode == 0, second.stderr
        [first_thread], [second_thread] = (STARTED.findall(r.stdout) for r in (first, second))
        notebook = nbformat.read(REPO / "examples" / "quickstart.ipynb", as_version=4)
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(examples)}},
        )
        client.execute(env=env)
    # The second folder's run was told of the first's, and both named the same memory.
    assert f"thread {first_thread}" in line_with(second.stdout, "You researched")
    for run in (first, second):
        memory_line = line_with(run.stdout, "memory        ")
        assert f"at {memory}," in memory_line, memory_line
    # The notebook, from a third folder, recalled the second run's report (the copy kept).
    printed = "\n".join(
        str(output.get("text", "")) for cell in notebook.cells for output in cell.get("outputs", [])
    )
    recalled = line_with(printed, "You researched a similar question")
    assert recalled.endswith(f"thread {second_thread}"), recalled
    # Nothing landed in a working directory; one report for the one question, three threads,
    # and one for the notebook's follow-up on its thread.
    assert not any((folder / ".deep_research" / "memory").exists() for folder in (one, two))
    assert not (examples / ".deep_research").exists()
    listed = run_cli(three, env, "memory", "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"Memory at {memory}: 2 reports", lines
    follow_up, question = lines[1:]
    assert NOTEBOOK_THREAD in follow_up and "Which of those sources" in follow_up, lines
    assert NOTEBOOK_THREAD in question and QUESTION in question, lines
    assert question.endswith(f"(also researched in {second_thread}, {first_thread})"), lines
