"""evals/README.md is a test: every `python -m evals...` command it shows runs here, as written.

Each runs as `python -m` would run it, in this process (so the graph and MiniLM load
once), in one temporary directory (the `--generate` ones first),
against the scripted model server (the agent's replies from CitingBrain, the judge's from
JudgeBrain), the fake Tavily API and the local LangSmith receiver (`LANGSMITH_API_KEY=...`
becomes a fake key, `LANGSMITH_ENDPOINT` points at the receiver). One is left out by
design: the live link check needs the internet; its code is tested against 127.0.0.1 in
tests/integration/test_evals.py.
"""

from __future__ import annotations

import json
import re
import runpy
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.citing_brain import CitingBrain
from tests.support.cli import cli_env
from tests.support.fakes.langsmith_server import FakeLangSmithServer
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.judge_brain import JudgeBrain, judge_kind
from tests.support.readme import FENCE, REPO

EVALS_README = (REPO / "evals" / "README.md").read_text(encoding="utf-8")
NEEDS_THE_INTERNET = "--live-links"
LANGSMITH_KEY = "lsv2_pt_FAKE0123456789abcdef0123456789"
QUERIES = [
    {"id": 51, "prompt": "How well do heat pumps work in cold climates?"},
    {"id": 52, "prompt": "热泵在北欧冬季的运行成本是多少？"},
]


def readme_commands() -> list[str]:
    """Every `python -m evals...` line of the README's bash blocks, comments cut."""
    commands = []
    for language, body in FENCE.findall(EVALS_README):
        if language != "bash":
            continue
        for line in body.splitlines():
            command = line.split(" #", 1)[0].strip()
            if re.search(r"(^|\s)python -m evals\.", command):
                commands.append(command)
    return commands


class Brain:
    """The agent's model and the judge on one server, told apart by the system prompt."""

    def __init__(self) -> None:
        self.agent, self.judge = CitingBrain(), JudgeBrain()

    async def __call__(self, body: dict[str, Any]) -> Reply:
        try:
            judge_kind(body)
        except ValueError:
            return await self.agent(body)
        return self.judge(body)


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(command: str, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> Ran:
    """`command` as `python -m` runs it, in this process: the graph and MiniLM load once."""
    argv = shlex.split(command)
    while "=" in argv[0]:  # `NAME=value python ...`: the README's placeholder, a fake key here
        name = argv.pop(0).partition("=")[0]
        env = {**env, name: LANGSMITH_KEY}
    assert argv[:2] == ["python", "-m"], command
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.setattr(sys, "argv", [argv[2], *argv[3:]])
        try:
            runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
            code: Any = 0
        except SystemExit as exit_:
            code = exit_.code
    out = capsys.readouterr()
    return Ran(code if isinstance(code, int) else 1, out.out, out.err)


# runpy's note that `evals.run` was imported before: it runs again as `__main__`, as intended.
@pytest.mark.filterwarnings("ignore:'evals.run' found in sys.modules:RuntimeWarning")
def test_every_evals_readme_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = readme_commands()
    skipped = [c for c in commands if NEEDS_THE_INTERNET in c]
    assert len(skipped) == 1, skipped
    # The outputs the other commands read are made first, wherever the README shows them.
    ran = sorted((c for c in commands if c not in skipped), key=lambda c: "--generate" not in c)
    modules = {next(a for a in shlex.split(c) if a.startswith("evals.")) for c in ran}
    assert modules == {"evals.run", "evals.pairwise", "evals.drb"}
    (tmp_path / "query.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUERIES), encoding="utf-8"
    )
    with (
        ScriptedOpenAIServer(Brain()) as llm,
        FakeTavilyServer() as tavily,
        FakeLangSmithServer() as langsmith,
    ):
        env = {**cli_env(llm, tavily, tmp_path), "LANGSMITH_ENDPOINT": langsmith.url}
        monkeypatch.chdir(tmp_path)
        results = {command: run(command, env, capsys) for command in ran}
        feedback = {json.loads(r.body)["key"] for r in langsmith.received if r.path == "/feedback"}
    for command, result in results.items():
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"

    def output(fragment: str) -> str:
        [stdout] = [r.stdout for c, r in results.items() if c.endswith(fragment)]
        return stdout

    assert sorted(p.name for p in (tmp_path / "runs" / "b").glob("*.json")) == [
        "battery-recycling-eu.json",
        "heat-pumps-nordic.json",
    ]
    assert "judge_groundedness" in output("--judge local:qwen3-8b runs/a")
    assert "B's win rate" in output("runs/a runs/b")
    articles = [
        json.loads(line)
        for line in (tmp_path / "deep_research.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [(a["id"], a["prompt"]) for a in articles] == [(q["id"], q["prompt"]) for q in QUERIES]
    assert all(":~:" not in a["article"] and "](https://" in a["article"] for a in articles)
    # The experiment ran on the dataset it created, and recorded every judge's score.
    assert {"judge_structure", "judge_groundedness", "judge_coverage", "link_format"} <= feedback
