"""The follow-up pages run as written (#39): docs/cli.md's `--follow-up` lines on a real
finished thread, and docs/python.md's follow-up snippet after its first one, in one session
as a reader runs them; neither sends a search for a question the thread's sources answer."""

from __future__ import annotations

import contextlib
import io
import shlex
from pathlib import Path

import pytest

from tests.support.brain import LINK, role_of
from tests.support.cli import QUESTION, cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.follow_up_brain import FollowUpBrain
from tests.support.readme import block_after, run_with_top_level_await, section

pytestmark = pytest.mark.slow  # starts subprocesses and server processes

DOCS_THREAD = "8d04e7c5"  # the thread id the page shows


def test_the_cli_follow_up_lines_run_as_written_on_a_finished_thread(tmp_path: Path) -> None:
    lines = block_after("<!-- cli-follow-up").strip().splitlines()
    commands = [shlex.split(line.split("#", 1)[0]) for line in lines]
    assert [argv[:2] for argv in commands] == [
        ["deep-research", "--follow-up"],
        ["deep-research", "runs"],
    ]
    with ScriptedOpenAIServer(FollowUpBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        first = run_cli(tmp_path, env, QUESTION)
        assert first.returncode == 0, first.stderr
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        searched = len(tavily.requests)
        outputs = []
        for argv in commands:
            args = [log.stem if arg == DOCS_THREAD else arg for arg in argv[1:]]
            done = run_cli(tmp_path, env, *args)
            assert done.returncode == 0, (argv, done.stdout, done.stderr)
            outputs.append(done.stdout)
        assert len(tavily.requests) == searched, "the thread's sources answer it: no search"
    assert f"follow-up: {commands[0][3][:40]}" in outputs[1]
    assert len(list((tmp_path / "reports").glob("*.md"))) == 2, "the first report stays"


async def test_the_python_follow_up_snippet_runs_after_the_first_on_its_thread(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tavily: FakeTavilyServer
) -> None:
    monkeypatch.chdir(tmp_path)
    page = section("# From Python")
    first = block_after("```python", page)
    follow_up = block_after("<!-- python-follow-up", page)
    names: dict[str, object] = {}
    with ScriptedOpenAIServer(FollowUpBrain()) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        await run_with_top_level_await(first, names)
        searched, asked = len(tavily.requests), len(llm.requests)
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            await run_with_top_level_await(follow_up, names)
        bodies = llm.requests[asked:]
    assert len(tavily.requests) == searched > 0, "answered from the thread: no search"
    assert not [b for b in bodies if role_of(b) == "researcher"]
    cited = set(LINK.findall(output.getvalue()))
    assert cited and cited <= tavily.returned_urls, output.getvalue()
