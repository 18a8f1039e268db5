"""Hostile input to the CLI run as a user runs it (a pipe, a terminal): text that looks like
rich markup (from the user, the model or a stored log), traffic logs that are cut short or
hold records of the wrong shape, a question whose bytes are not UTF-8.

The trustworthy outcome: every such text is shown literally (no crash, no live hyperlink),
and a damaged log is read as far as it can be, with the skipped lines reported once. The
same promises in process: tests/unit/cli/test_plain_markup.py and test_runs_hostile.py.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from deep_research.cli.main import main
from tests.support.brain import FAIL_MARKER, ResearchBrain, _texts
from tests.support.cli import (
    cli_env,
    finish_in_terminal,
    read_until,
    run_cli,
    start_in_terminal,
    traffic_records,
)
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.tavily_server import FakeTavilyServer, topic_corpus
from tests.support.hostile import BAD_LINES, CSI, MARKUP, OSC8, RAW_LINK, todo_list

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

QUESTION = "Heat pumps [/usr/bin] [bold]x [/] ["  # short enough for the `runs` column


@dataclass
class MarkupBrain(ResearchBrain):
    """Clarifier questions, todos and research topics that look like rich markup; one
    researcher fails with an error text that quotes its topic (brackets and all)."""

    def __post_init__(self) -> None:
        self.topics = [f"topic {text}" for text in MARKUP] + [
            f"{FAIL_MARKER} [/usr/bin] {RAW_LINK}"
        ]

    def _clarify(self, body: dict[str, Any]) -> Reply:
        if any("Before I start" in t for t in _texts(body, "assistant")):
            decision: dict[str, Any] = {
                "need_clarification": False,
                "questions": [],
                "verification": "Researching [/usr/bin] [bold] as asked.",
            }
        else:
            questions = [f"question {text}" for text in MARKUP]
            decision = {"need_clarification": True, "questions": questions}
        return Reply(content=f"```json\n{json.dumps(decision)}\n```")

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        turns = [m for m in body["messages"] if m.get("tool_calls")]
        if not turns:  # write_todos must be called alone
            return Reply(tool_calls=[ToolCall("write_todos", {"todos": todo_list()})])
        if len(turns) == 1:
            return Reply(tool_calls=[ToolCall("research", {"topic": t}) for t in self.topics])
        return super()._orchestrate(body)  # the research results are in: the report


def screen_text(seen: bytes | bytearray) -> str:
    return CSI.sub("", bytes(seen).decode(errors="replace"))


@pytest.fixture(scope="module")
def markup_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    """One piped run whose question, todos, topics and researcher error hold markup."""
    cwd = tmp_path_factory.mktemp("markup")
    settings = ["--set", "max_researchers_per_turn=10", "--set", "max_research_calls_per_reply=10"]
    with ScriptedOpenAIServer(MarkupBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(cwd, cli_env(llm, tavily, cwd), *settings, QUESTION)
    yield cwd, result


def test_markup_in_question_todos_topics_and_errors_is_printed_literally_in_a_pipe(
    markup_run: tuple[Path, Any],
) -> None:
    _cwd, result = markup_run
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert OSC8 not in out and "\x1b" not in out
    assert "plan: " + "; ".join(t["content"] for t in todo_list()) in out
    for text in MARKUP:
        assert f"researching: topic {text}" in out, text
        assert re.search(rf"search \d+/25: topic {re.escape(text)} 0", out), text
    [failed] = [line for line in out.splitlines() if "research failed: " in line]
    assert f"{FAIL_MARKER} [/usr/bin]" in failed, failed
    assert "Report saved: reports/" in out


def test_runs_and_resume_work_for_a_directory_holding_markup_runs(
    markup_run: tuple[Path, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cwd, _result = markup_run
    log, _records = traffic_records(cwd)
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert main(["runs"]) == 0
    _header, line = capsys.readouterr().out.splitlines()
    assert QUESTION in line and " done " in line
    assert main(["--resume", log.stem]) == 0
    out = capsys.readouterr().out
    assert f"Thread {log.stem} was already done" in out
    assert main(["replay", str(log)]) == 0
    out = capsys.readouterr().out
    assert "[link=https://evil.example]x[/link]" in out and OSC8 not in out


def test_terminal_run_shows_markup_questions_topics_and_answer_literally(tmp_path: Path) -> None:
    answer = "cold [/usr/bin] [link=https://evil.example]x[/link]"
    with ScriptedOpenAIServer(MarkupBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        settings = [
            "--set",
            "max_researchers_per_turn=10",
            "--set",
            "max_research_calls_per_reply=10",
        ]
        proc, leader = start_in_terminal(tmp_path, env, *settings, QUESTION)
        seen = bytearray()
        try:
            read_until(leader, b"> ", seen)
            os.write(leader, answer.encode() + b"\n")
            code = finish_in_terminal(proc, leader, seen)
        finally:
            os.close(leader)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    screen = screen_text(seen)
    assert code == 0, screen
    assert OSC8 not in bytes(seen).decode(errors="replace"), "no live hyperlink in the terminal"
    # The clarifier asks at most three questions.
    for number, text in enumerate(MARKUP[:3], start=1):
        assert f"{number}. question {text}" in screen, text
    for text in MARKUP:
        assert f" topic {text} " in screen and f"] plan {text}" in screen, text
    assert "Report saved:" in screen


# --- thread ids that name paths ------------------------------------------------------------


# --- traffic logs cut short or of the wrong shape ------------------------------------------


# Records whose envelope is fine but whose fields are not: kept, shown as unreadable.
ODD_RECORDS = [
    {"t": 9.1, "kind": "progress", "event": "orchestrator_turn"},
    {"t": 9.2, "kind": "model_reply", "role": "x", "tokens_in": "many", "seconds": "slow"},
    {"t": 9.3, "kind": "interrupt", "questions": 5},
    {"t": 9.4, "kind": "model_reply", "tool_calls": [7]},
]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding one finished run (checkpoints, log, report) to damage copies of."""
    cwd = tmp_path_factory.mktemp("finished")
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(cwd, cli_env(llm, tavily, cwd), "--no-clarify", "heat pumps?")
    assert result.returncode == 0, result.stderr
    return cwd


@pytest.mark.parametrize("shape", BAD_LINES)
def test_a_damaged_traffic_log_is_read_by_runs_resume_and_replay(
    shape: str,
    finished_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cwd = tmp_path / "copy"
    shutil.copytree(finished_run, cwd)
    log, _ = traffic_records(cwd)
    good = log.read_bytes()
    bad = BAD_LINES[shape]
    odd = "".join(json.dumps(r) + "\n" for r in ODD_RECORDS).encode()
    if shape == "start record whose t is text":
        log.write_bytes(bad + b"\n" + good + odd)  # before the real start record
    else:
        log.write_bytes(good + odd + bad)  # last, without its newline: a cut write
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    warning = f"deep-research: skipped 1 unreadable line in .deep_research/runs/{log.name}"

    assert main(["runs"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [warning]
    assert log.stem in captured.out and " done " in captured.out

    assert main(["replay", str(log)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        warning.replace(".deep_research/runs/", str(log.parent) + "/")
    ]
    assert "run start     heat pumps?" in captured.out and "Totals" in captured.out
    assert captured.out.count("(unreadable record)") == len(ODD_RECORDS)

    assert main(["--resume", log.stem]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [warning], "reported once"
    assert "was already done" in captured.out and "searches      " in captured.out


def test_a_question_with_bytes_that_are_not_utf8_is_researched_with_them_replaced(
    tmp_path: Path,
) -> None:
    # Python hands a non-UTF-8 argv byte over as a lone surrogate; the OS gets the byte back.
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(tmp_path, cli_env(llm, tavily, tmp_path), "caf\udce9 heat pumps")
        asked = [m for body in llm.requests for m in body["messages"] if m["role"] == "user"]
    assert result.returncode == 0, result.stderr
    assert any("caf\ufffd heat pumps" in str(m["content"]) for m in asked)


@dataclass
class SurrogateBrain(ResearchBrain):
    """A topic (a tool call's argument) and a report holding lone surrogates: JSON's
    `"\\ud83d"` without its pair decodes to one."""

    def __post_init__(self) -> None:
        self.topics = ["heat pumps \ud83d in cold climates", "heat pump costs"]

    @staticmethod
    def _report(title: str, links: list[str]) -> str:
        cited = " ".join(f"[source {i}]({url})" for i, url in enumerate(links, 1))
        return f"# {title} \ud83d\n\nWhat the researchers \udc00 found: {cited}.\n"


def surrogate_corpus(query: str, max_results: int) -> list[dict[str, Any]]:
    return [{**r, "content": f"{r['content']} \ud83d"} for r in topic_corpus(query, max_results)]


def test_lone_surrogates_from_the_model_and_the_search_api_cost_nothing(tmp_path: Path) -> None:
    """A lone surrogate in a model's reply, its tool call and search snippets: relevance
    scoring, the requests sent back to the model, the traffic log and memory take it as
    U+FFFD; the run completes and remembers its report."""
    with (
        ScriptedOpenAIServer(SurrogateBrain()) as llm,
        FakeTavilyServer(corpus=surrogate_corpus) as tavily,
    ):
        env = {**cli_env(llm, tavily, tmp_path), "USE_MEMORY": "true"}
        env["MEMORY_DIR"] = str(tmp_path / "memory")
        result = run_cli(tmp_path, env, "heat pumps")
    assert result.returncode == 0, result.stderr
    assert "report remembered" in result.stdout and "Traceback" not in result.stderr
    _, records = traffic_records(tmp_path)
    assert records[-1]["kind"] == "run" and records[-1]["status"] == "done"
    assert any("researchers \ufffd found" in json.dumps(r, ensure_ascii=False) for r in records)
