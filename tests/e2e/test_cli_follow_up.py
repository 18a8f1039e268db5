"""`deep-research --follow-up THREAD "question"` end to end against the scripted servers.

One thread, three questions: the first researches two topics under a cap of 3 searches; a
follow-up its sources answer sends no search; a follow-up about two parts not yet
researched researches only those, with the one search the thread's cap has left. Each
answer is its own report file, `runs` lists the thread's questions and `replay` each report.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

from tests.support.brain import LINK, _texts, role_of
from tests.support.cli import (
    FOLLOW_UP_PROMPT,
    QUESTION,
    cli_env,
    finish_in_terminal,
    read_until,
    run_cli,
    start_in_terminal,
)
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.follow_up_brain import (
    ANSWERED,
    FIRST_TOPICS,
    MISSING,
    MISSING_TOPICS,
    FollowUpBrain,
)

pytestmark = pytest.mark.slow  # starts subprocesses and server processes


@dataclass
class Thread:
    cwd: Path
    env: dict[str, str]
    thread_id: str
    first: subprocess.CompletedProcess[str]
    answered: subprocess.CompletedProcess[str]
    missing: subprocess.CompletedProcess[str]
    searches: list[list[str]]  # the search API's queries, after each of the three runs
    requests: list[int]  # how many requests the search API had, after each of the three
    topics: list[list[str]]  # the researchers' topics, in each of the three runs
    first_report: str  # the first report's text, as it was before the follow-ups


def _researcher_topics(llm: ScriptedOpenAIServer) -> list[str]:
    return [_texts(b, "user")[0] for b in llm.requests if role_of(b) == "researcher"]


@pytest.fixture(scope="module")
def thread(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Thread]:
    cwd = tmp_path_factory.mktemp("follow-up")
    with ScriptedOpenAIServer(FollowUpBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, cwd)
        searches, requests, topics = [], [], []
        first = run_cli(cwd, env, QUESTION, "--max-searches", "3")
        assert first.returncode == 0, first.stderr
        [log] = (cwd / ".deep_research" / "runs").glob("*.jsonl")
        [report] = (cwd / "reports").iterdir()
        first_report = report.read_text()
        searches.append(list(tavily.queries))
        requests.append(len(tavily.requests))
        topics.append(_researcher_topics(llm))
        runs = []
        for question in (ANSWERED, MISSING):
            asked = len(llm.requests)
            runs.append(run_cli(cwd, env, "--follow-up", log.stem, question))
            assert runs[-1].returncode == 0, runs[-1].stderr
            searches.append(list(tavily.queries))
            requests.append(len(tavily.requests))
            topics.append(_researcher_topics_since(llm, asked))
        yield Thread(cwd, env, log.stem, first, *runs, searches, requests, topics, first_report)


def _researcher_topics_since(llm: ScriptedOpenAIServer, start: int) -> list[str]:
    bodies = llm.requests[start:]
    return [_texts(b, "user")[0] for b in bodies if role_of(b) == "researcher"]


def test_a_follow_up_its_sources_answer_sends_no_search(thread: Thread) -> None:
    assert len(thread.searches[0]) == 2, "the first run searched each of its two topics"
    assert thread.requests[1] == thread.requests[0], "the search API got no request for it"
    assert thread.searches[1] == thread.searches[0]
    assert thread.topics[1] == [], "and dispatched no researcher"
    out = thread.answered.stdout
    assert f"Follow-up on {thread.thread_id}: {ANSWERED}" in out
    assert "Report saved:" in out and "status        complete" in out
    # The summary counts the thread's searches against its cap, as a run's does.
    assert "searches      2 of 3 sent" in out, out


def test_a_follow_up_researches_only_the_missing_part_within_the_threads_cap(
    thread: Thread,
) -> None:
    assert set(thread.topics[2]) <= set(MISSING_TOPICS) and thread.topics[2]
    assert not set(thread.topics[2]) & set(FIRST_TOPICS), "what was read is not read again"
    new = thread.searches[2][len(thread.searches[1]) :]
    assert len(new) == 1, "the cap of 3 is the thread's: 2 spent by the first run, 1 left"
    assert any(topic in new[0] for topic in MISSING_TOPICS)


def test_each_answer_is_its_own_report_and_the_first_is_kept(thread: Thread) -> None:
    reports = sorted((thread.cwd / "reports").iterdir())
    assert len(reports) == 3
    names = " ".join(r.name for r in reports)
    assert "which-of-the-sources" in names and "and-what-about-noise" in names
    [first] = [r for r in reports if "heat-pumps-work" in r.name]
    assert first.read_text() == thread.first_report
    [missing] = [r for r in reports if "noise" in r.name]
    assert LINK.findall(missing.read_text()), "the follow-up's report cites pages"


def test_runs_lists_the_threads_questions_and_replay_each_report(thread: Thread) -> None:
    runs = run_cli(thread.cwd, thread.env, "runs")
    assert runs.returncode == 0, runs.stderr
    assert f"follow-up: {ANSWERED[:40]}" in runs.stdout
    assert f"follow-up: {MISSING}" in runs.stdout
    assert len([line for line in runs.stdout.splitlines() if "follow-up:" in line]) == 2
    replay = run_cli(thread.cwd, thread.env, "replay", thread.thread_id)
    assert replay.returncode == 0, replay.stderr
    assert f"run follow-up {ANSWERED}" in replay.stdout
    assert f"run follow-up {MISSING}" in replay.stdout
    assert replay.stdout.count("run end       report reports/") == 3


def test_an_unknown_thread_is_refused_as_bad_input(thread: Thread) -> None:
    result = run_cli(thread.cwd, thread.env, "--follow-up", "nosuch00", "Why?")
    assert result.returncode == 2
    assert "no run 'nosuch00'" in result.stderr and "Traceback" not in result.stderr


def test_a_thread_that_did_not_finish_is_refused_with_resume_named(thread: Thread) -> None:
    """A run killed before its first checkpoint: its log says what was asked, no report."""
    log = thread.cwd / ".deep_research" / "runs" / "cut00000.jsonl"
    start = {"kind": "run", "t": 1.0, "action": "start", "thread": "cut00000", "question": "Q?"}
    log.write_text(json.dumps(start) + "\n")
    result = run_cli(thread.cwd, thread.env, "--follow-up", "cut00000", "And then?")
    assert result.returncode == 2, result.stderr
    assert "not finished" in result.stderr
    assert "deep-research --resume cut00000" in result.stderr
    assert log.read_text() == json.dumps(start) + "\n", "a refused follow-up logs nothing"


def test_a_thread_running_in_another_process_is_refused_before_anything_is_logged(
    thread: Thread,
) -> None:
    """Another terminal's `--follow-up` or `--resume` of a thread this directory is running
    (its lock held, as the running CLI holds it) exits 2 and leaves the log as it was. The
    fixture's three runs, one after another on this thread, show each lets it go."""
    log = thread.cwd / ".deep_research" / "runs" / f"{thread.thread_id}.jsonl"
    before = log.read_text()
    lock = thread.cwd / ".deep_research" / "locks" / f"{thread.thread_id}.lock"
    with FileLock(lock, timeout=0):
        for args in (
            ["--follow-up", thread.thread_id, "And the noise?"],
            ["--resume", thread.thread_id],
        ):
            result = run_cli(thread.cwd, thread.env, *args)
            assert result.returncode == 2, result.stderr
            assert "is running in another process" in result.stderr, result.stderr
            assert "Traceback" not in result.stderr
    assert log.read_text() == before, "a refused session logs nothing"


def test_piped_runs_never_offer_a_follow_up(thread: Thread) -> None:
    for run in (thread.first, thread.answered, thread.missing):
        assert "--follow-up" not in run.stdout, "a script gets no offer"


def test_in_a_terminal_the_follow_ups_typed_after_the_report_are_asked_on_its_thread(
    tmp_path: Path,
) -> None:
    """After the report, the terminal offers a follow-up: a question typed at the prompt is
    asked on the same thread (a follow-up its sources answer: no search, its own report),
    then the prompt comes back; Enter alone ends the session."""
    with ScriptedOpenAIServer(FollowUpBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        proc, leader = start_in_terminal(tmp_path, env, "--no-clarify", QUESTION)
        seen = bytearray()
        try:
            read_until(leader, FOLLOW_UP_PROMPT, seen)
            searched = len(tavily.requests)
            os.write(leader, ANSWERED.encode() + b"\n")
            code = finish_in_terminal(proc, leader, seen)  # the second prompt: Enter
            assert code == 0, seen.decode(errors="replace")
        finally:
            os.close(leader)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert len(tavily.requests) == searched, "the follow-up its sources answer searched"
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))
    [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
    offer = f'or later: deep-research --follow-up {log.stem} "…"'
    assert screen.count(offer) == 2, screen
    assert screen.index("Report saved:") < screen.index(offer)
    assert f"Follow-up on {log.stem}: {ANSWERED}" in screen
    assert screen.count("Report saved:") == 2 and screen.count("status        complete") == 2
    reports = sorted((tmp_path / "reports").iterdir())
    assert len(reports) == 2 and any("which-of-the-sources" in r.name for r in reports)
    actions = [json.loads(line).get("action") for line in log.read_text().splitlines()]
    assert "follow_up" in actions


def test_a_terminal_run_whose_output_goes_to_a_file_ends_without_the_prompt(
    tmp_path: Path,
) -> None:
    """`deep-research "q" > out.txt` typed at a terminal: stdin is the terminal, stdout is
    not, so nobody would see the prompt: the run ends at its summary."""
    import pty

    from tests.support.cli import CLI_TIMEOUT, cli_command

    leader, follower = pty.openpty()
    out = tmp_path / "out.txt"
    with ScriptedOpenAIServer(FollowUpBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        try:
            with out.open("w") as written:
                done = subprocess.run(
                    cli_command("--no-clarify", QUESTION),
                    cwd=tmp_path,
                    env=env,
                    stdin=follower,
                    stdout=written,
                    stderr=subprocess.PIPE,
                    timeout=CLI_TIMEOUT,
                    check=False,
                )
        finally:
            os.close(follower)
            os.close(leader)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "Report saved:" in text and FOLLOW_UP_PROMPT.decode() not in text
