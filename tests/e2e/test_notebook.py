"""`examples/quickstart.ipynb` executed top to bottom (nbclient) against the scripted servers.

The kernel is a separate process: the endpoints reach it through its environment, the
same way a person's `.env` or shell would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.support.brain import LINK, ResearchBrain, _texts, role_of
from tests.support.cli import REPO, cli_env
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

NOTEBOOK = REPO / "examples" / "quickstart.ipynb"


def outputs_text(cell: Any) -> str:
    texts = []
    for output in cell.get("outputs", []):
        texts.append(output.get("text", ""))
        texts.extend(str(value) for value in output.get("data", {}).values())
    return "\n".join(texts)


def test_quickstart_notebook_runs_top_to_bottom(tmp_path: Path) -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells), "stored without outputs"
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
        )
        client.execute(env=env)  # raises CellExecutionError if any cell fails
        bodies = llm.requests
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    # Only our output: no dependency's bar or warning (the model's load, when it went
    # through transformers, printed a "Loading weights" bar and "IProgress not found").
    stderr = [o.text for c in code for o in c.outputs if o.get("name") == "stderr"]
    assert not stderr, stderr
    questions = outputs_text(code[1])
    assert "Which climate zone?" in questions, "the interrupt's questions are shown"
    plan = outputs_text(code[2])
    assert "'plan': [{'content': 'heat pump efficiency in cold climates'" in plan, plan
    assert "'round': 1" in plan and "researching:" not in plan, "the plan waits"
    progress = outputs_text(code[3])
    # The CLI's lines (`printable_line`), not raw event dicts.
    assert "plan approved" in progress.splitlines() and "'event'" not in progress, progress
    assert "researching: heat pump" in progress and "searching: heat pump" in progress
    report = outputs_text(code[4])
    cited = set(LINK.findall(report))
    assert cited and cited <= tavily.returned_urls, report
    assert "found by: heat pump" in outputs_text(code[5])
    orchestrator = [b for b in bodies if role_of(b) == "orchestrator"]
    assert all("Nordic climate, detached homes" in _texts(b, "user") for b in orchestrator)
    follow_up = outputs_text(code[6])
    assert "new searches: 0" in follow_up, "the follow-up is answered from what was read"
    cited = set(LINK.findall(follow_up))
    assert cited and cited <= tavily.returned_urls, follow_up
