"""The CLI's outcome for a report without a retrieved source: saved, said, exit code 3."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.cli.report_file import unsourced_note
from tests.support.brain import COULD_NOT_FIND, INVENTED, ResearchBrain, UnsourcedBrain, no_results
from tests.support.cli import QUESTION, cli_env, run_cli, traffic_records
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process


@pytest.mark.parametrize(
    ("cites", "status", "says"),
    [
        ("nothing", "no_sources", "it cites no source"),
        ("invented", "unverified", "every citation in it was removed"),
    ],
)
# Memory on: such a report is not remembered (nothing in it is research), and `runs` names
# its status beside `done`.
def test_a_report_without_a_retrieved_source_is_saved_but_exits_3(
    tmp_path: Path, cites: str, status: str, says: str
) -> None:
    with (
        ScriptedOpenAIServer(UnsourcedBrain(cites=cites)) as llm,
        FakeTavilyServer(corpus=no_results) as tavily,
    ):
        env = {**cli_env(llm, tavily, tmp_path), "USE_MEMORY": "true"}
        result = run_cli(tmp_path, env, QUESTION)
    assert result.returncode == 3, result.stderr
    assert tavily.queries, "the researchers searched"
    [report] = (tmp_path / "reports").glob("*.md")
    # Opened later, alone, the file says what it lacks in its own first lines.
    saved = report.read_text()
    assert saved.startswith(f"> **Note: not a finished report**: {says}"), saved
    text = saved[len(unsourced_note(status)) :]
    assert INVENTED not in text
    if cites == "nothing":
        assert text.strip() == COULD_NOT_FIND
    assert f"Report saved: reports/{report.name}" in result.stdout
    assert f"Not a finished report: {says}" in result.stdout, result.stdout
    assert f"status        {status}" in result.stdout
    assert f"report written ({len(text):,} characters), but {says}" in result.stdout
    assert f"report not remembered (status {status}: not research)" in result.stdout
    listed = run_cli(tmp_path, env, "memory", "list")
    assert listed.returncode == 0 and ": 0 reports" in listed.stdout, listed.stdout
    _, records = traffic_records(tmp_path)
    [end] = [r for r in records if r["kind"] == "run" and r["action"] == "end"]
    assert end["status"] == "done" and end["report_status"] == status
    runs = run_cli(tmp_path, env, "runs")
    words = {"no_sources": "no sources", "unverified": "unverified"}[status]
    [row] = [line for line in runs.stdout.splitlines() if f"reports/{report.name}" in line]
    assert f"  done, {words}  " in row, runs.stdout


def test_a_report_citing_retrieved_pages_exits_0(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(tmp_path, cli_env(llm, tavily, tmp_path), QUESTION)
        runs = run_cli(tmp_path, cli_env(llm, tavily, tmp_path), "runs")
    assert result.returncode == 0, result.stderr
    assert "status        complete" in result.stdout
    assert "Not a finished report" not in result.stdout
    [report] = (tmp_path / "reports").glob("*.md")
    assert report.read_text().startswith("# "), "a finished report carries no note"
    [row] = runs.stdout.splitlines()[1:]
    assert "  done  " in row and "done," not in row
