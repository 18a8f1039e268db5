"""The CLI with memory on: the second run of a question is told of the first, searches less,
and still cites; the memory it wrote is listed by `deep-research memory list`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.brain import ResearchBrain
from tests.support.cli import QUESTION, cli_env, default_memory, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

THREAD = re.compile(r"thread (\S+)")


def test_the_second_run_is_told_of_the_first_and_searches_less(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = {**cli_env(llm, tavily, tmp_path), "USE_MEMORY": "true", "FETCH_TOP_N": "0"}
        first = run_cli(tmp_path, env, "--no-clarify", QUESTION)
        assert first.returncode == 0, first.stderr
        searched = len(tavily.queries)
        assert searched >= 2
        second = run_cli(tmp_path, env, "--no-clarify", QUESTION)
        assert second.returncode == 0, second.stderr
        again = len(tavily.queries) - searched
    assert again < searched
    lines = second.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "You researched" in line)
    found = re.search(r"a similar question on \d{4}-\d{2}-\d{2}: thread (\S+)", lines[at])
    assert found
    earlier = found.group(1).rstrip(";")
    # The id it names is one `replay` and `--resume` take here (the thread is done).
    assert lines[at + 1] == (
        f"  deep-research replay {earlier} shows it, "
        f"deep-research --resume {earlier} continues it if it stopped"
    )
    assert "You researched" not in lines[at + 2], "two lines at most"
    assert run_cli(tmp_path, env, "replay", earlier).returncode == 0
    resumed = run_cli(tmp_path, env, "--resume", earlier)
    assert resumed.returncode == 0, resumed.stderr
    memory_line = next(line for line in second.stdout.splitlines() if line.startswith("memory"))
    assert f"at {default_memory(tmp_path)}," in memory_line  # MEMORY_DIR unset: HOME's
    assert "answered from it" in memory_line and "report remembered" in memory_line
    # The second run's report (every Sources list dates its pages; the resume of a finished
    # thread writes none): cited from memory.
    *_, report = sorted((tmp_path / "reports").glob("*.md"), key=lambda p: p.stat().st_mtime)
    assert "](https://" in report.read_text() and "(retrieved " in report.read_text()

    listed = run_cli(tmp_path, env, "memory", "list")
    assert listed.returncode == 0, listed.stderr
    # The same question twice: the second run's report replaced the first's copy.
    assert "1 report" in listed.stdout and f"(also researched in {earlier})" in listed.stdout


def test_a_thread_from_another_directory_points_to_memory_not_to_resume(tmp_path: Path) -> None:
    first_dir, second_dir = tmp_path / "one", tmp_path / "two"
    first_dir.mkdir()
    second_dir.mkdir()
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        # No MEMORY_DIR: both folders find the user's memory (the data directory in HOME).
        env = {**cli_env(llm, tavily, tmp_path), "USE_MEMORY": "true", "FETCH_TOP_N": "0"}
        assert run_cli(first_dir, env, "--no-clarify", QUESTION).returncode == 0
        second = run_cli(second_dir, env, "--no-clarify", QUESTION)
        assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "You researched" in line)
    found = THREAD.search(lines[at])
    assert found
    earlier = found.group(1).rstrip(";")
    assert lines[at + 1] == (
        "  it ran in another folder: deep-research memory search shows what it found"
    )
    refused = run_cli(second_dir, env, "--resume", earlier)
    assert refused.returncode == 2 and f"no run {earlier!r}" in refused.stderr
