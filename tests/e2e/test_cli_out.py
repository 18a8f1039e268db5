"""`deep-research --out PATH "question"` (docs/cli.md): the report where the user chose, its
exports beside it, and an existing file refused before the run starts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tests.support.brain import ResearchBrain
from tests.support.cli import QUESTION, cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process


def test_out_names_the_report_file_in_a_new_folder_with_its_export_beside(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        done = run_cli(tmp_path, env, "--out", "notes/heat-pumps.md", "--export", "html", QUESTION)
    assert done.returncode == 0, done.stderr
    report = tmp_path / "notes" / "heat-pumps.md"
    assert "](http" in report.read_text(encoding="utf-8"), "the cited report is there"
    assert report.with_suffix(".html").is_file()
    assert "Report saved: notes/heat-pumps.md" in done.stdout
    assert not (tmp_path / "reports").exists(), "nothing in the default folder"


def test_out_ending_in_a_slash_is_a_folder_the_report_keeps_its_usual_name(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        done = run_cli(tmp_path, env, "--out", "notes/", QUESTION)
    assert done.returncode == 0, done.stderr
    [report] = (tmp_path / "notes").glob("*.md")
    assert report.name == f"{date.today().isoformat()}-how-well-do-heat-pumps-work-in-cold.md"


def test_out_naming_an_existing_file_is_refused_before_any_model_call(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    mine = tmp_path / "notes" / "heat-pumps.md"
    mine.write_text("my own notes", encoding="utf-8")
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        done = run_cli(tmp_path, env, "--out", "notes/heat-pumps.md", QUESTION)
        assert (llm.requests, tavily.queries) == ([], [])
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "deep-research: --out: notes/heat-pumps.md already exists; choose another name or remove it"
    )
    assert mine.read_text(encoding="utf-8") == "my own notes"
    assert not (tmp_path / ".deep_research").exists(), "no run was started"
