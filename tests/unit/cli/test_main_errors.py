"""The CLI in process: bad input is one clear line, a dead model server one line and a
resumable run, and `runs` cuts a long error to one short line."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from deep_research.cli.main import main
from deep_research.memory.location import MemoryUnavailable
from deep_research.runtime.prompts import PromptError
from tests.support.cli import QUESTION
from tests.support.fakes.http_server import closed_port


def test_runs_cuts_a_long_multi_line_error_to_one_short_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    error = "ModelEndpointError: " + "the server said no; " * 10 + "\nTraceback (most recent call)"
    long_question = "Why is the sky blue " + "and why does it matter " * 5
    log = tmp_path / ".deep_research" / "runs" / "abc12345.jsonl"
    log.parent.mkdir(parents=True)
    records = [
        {"t": 1.0, "kind": "run", "action": "start", "question": long_question, "settings": {}},
        {"t": 2.0, "kind": "run", "action": "end", "status": "failed", "error": error},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.chdir(tmp_path)
    assert main(["runs"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert line.startswith("abc12345  ") and "not started" in line
    assert "Why is the sky blue and why does it matter" in line and "…" in line
    detail = line[header.index("report or error") :]
    assert detail.startswith("ModelEndpointError: the server said no;") and detail.endswith("…")
    assert len(detail) == 80 and "Traceback" not in line


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--max-searches", "many", QUESTION], 2, "invalid int value: 'many'"),
        (["--search", "bing", QUESTION], 2, "search_provider='bing'"),
        (["--set", "max_researcher_turns=99", QUESTION], 2, "less than or equal to 20"),
        (["--set", "nonsense", QUESTION], 2, "--set wants FIELD=VALUE"),
        (["--model", "gpt4", QUESTION], 2, "is not a model spec"),
        (["   "], 2, "give a question"),
        (["--resume", "nope"], 2, "no run 'nope'"),
        (["--resume", "deadbeef"], 2, "no run 'deadbeef'"),
        (["replay", "missing.jsonl"], 2, "no traffic log at missing.jsonl"),
    ],
)
def test_bad_input_is_one_clear_line(
    argv: list[str],
    code: int,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert main(argv) == code
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("deep-research: ") and says in line
    assert not (tmp_path / "reports").exists()


def test_dead_model_server_is_one_line_and_a_resumable_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    monkeypatch.setenv("LLM_BASE_URL", url)
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    assert main(["--no-clarify", QUESTION]) == 1
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("deep-research: Cannot reach the model server at " + url)
    thread = re.search(r"--resume (\w+)", captured.out)
    assert thread, captured.out
    assert main(["runs"]) == 0
    assert "stopped mid-run" in capsys.readouterr().out
    records = [
        json.loads(x)
        for x in (tmp_path / ".deep_research/runs")
        .glob("*.jsonl")
        .__next__()
        .read_text()
        .splitlines()
    ]
    assert records[-1]["status"] == "failed" and url in records[-1]["error"]


@pytest.mark.parametrize(
    ("error", "says"),
    [
        # A readable error is its message alone ...
        (
            MemoryUnavailable("memory at /m is in use by another process"),
            "deep-research: memory at /m is in use by another process\n",
        ),
        # ... any other is named, and a run's says how to resume it.
        (
            PromptError("no file"),
            "deep-research: PromptError: 'no file' (the run is checkpointed: resume it with "
            "the thread id shown above)\n",
        ),
        (
            RuntimeError("boom sk-abcdefghijklmnopqrstuvwxyz0123456789"),
            "deep-research: RuntimeError: boom [REDACTED] (the run is checkpointed: resume it "
            "with the thread id shown above)\n",
        ),
    ],
)
def test_a_failed_run_is_one_line_named_unless_its_message_says_why(
    error: Exception,
    says: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from deep_research.cli import main as cli_main

    def fail(argv: list[str], console: object) -> int:
        raise error

    monkeypatch.setattr(cli_main, "ask", fail)
    assert main([QUESTION]) == 1
    assert capsys.readouterr().err == says
