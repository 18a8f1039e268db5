"""The `deep-research` CLI end to end against the scripted servers: a piped run, a run in a
pseudo-terminal that answers the questions, the traffic log, `replay`, `runs`, errors.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from deep_research.cli.main import main
from deep_research.text.secrets import REDACTED
from tests.support.brain import LINK, ResearchBrain, _texts, role_of
from tests.support.cli import (
    LLM_KEY,
    QUESTION,
    REPO,
    TAVILY_KEY,
    cli_env,
    finish_in_terminal,
    read_until,
    run_cli,
    start_in_terminal,
    traffic_records,
)
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

INVENTED = "https://invented.example/heat-pumps"


class LeakyBrain(ResearchBrain):
    """Researchers quote credentials in their findings, as a careless page might; the
    orchestrator cites one page nobody retrieved."""

    def _orchestrate(self, body: dict[str, Any]) -> Reply:
        reply = super()._orchestrate(body)
        if reply.content:
            reply.content += f"\nAlso [a page nobody read]({INVENTED}).\n"
        return reply

    async def _research(self, body: dict[str, Any]) -> Reply:
        reply = await super()._research(body)
        if reply.content:
            reply.content += f"\nSeen on a page: Authorization: Bearer {LLM_KEY}, {TAVILY_KEY}"
        return reply


@dataclass
class FinishedRun:
    cwd: Path
    result: subprocess.CompletedProcess[str]
    llm: ScriptedOpenAIServer
    tavily: FakeTavilyServer
    log: Path
    records: list[dict[str, Any]]


@pytest.fixture(scope="module")
def piped_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FinishedRun]:
    """One run with stdin not a terminal, shared by the tests that read its outputs."""
    cwd = tmp_path_factory.mktemp("piped")
    with ScriptedOpenAIServer(LeakyBrain()) as llm, FakeTavilyServer() as tavily:
        result = run_cli(cwd, cli_env(llm, tavily, cwd), QUESTION)
        assert result.returncode == 0, result.stderr
        log, records = traffic_records(cwd)
        yield FinishedRun(cwd, result, llm, tavily, log, records)


def test_piped_run_skips_questions_and_saves_a_cited_report(piped_run: FinishedRun) -> None:
    out = piped_run.result.stdout
    assert "stdin is not a terminal: skipping clarifying questions" in out
    assert "clarifier" not in {role_of(body) for body in piped_run.llm.requests}
    [report] = (piped_run.cwd / "reports").glob("*.md")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d-how-well-do-heat-pumps-work-in-cold\.md", report.name)
    cited = set(LINK.findall(report.read_text()))
    assert len(cited) == 4 and cited <= piped_run.tavily.returned_urls
    assert f"Report saved: reports/{report.name}" in out
    assert re.search(r"orchestrator\s+2 calls\s+[\d,]+ tokens in\s+\d+ out", out), out
    assert re.search(r"researcher\s+4 calls", out), out
    assert "searches      2 of 25 sent\n" in out
    assert INVENTED not in report.read_text()
    assert "citations     4 kept, 1 removed (never retrieved)" in out, out


def test_piped_run_shows_no_third_party_bars_or_warnings(piped_run: FinishedRun) -> None:
    # The relevance model loads during this run. Through transformers it drew a "Loading
    # weights: 100%|…" bar on stderr, the stream of our one-line errors; it no longer uses
    # transformers, and no dependency's bar or warning may come back.
    for stream in (piped_run.result.stdout, piped_run.result.stderr):
        assert "%|" not in stream and "Loading weights" not in stream, stream
        assert "Warning" not in stream, stream
    assert piped_run.result.stderr == ""


def test_traffic_log_has_model_calls_searches_and_timings(piped_run: FinishedRun) -> None:
    records = piped_run.records
    assert records[0]["kind"] == "run" and records[0]["question"] == QUESTION
    assert records[-1] == {**records[-1], "kind": "run", "action": "end", "status": "done"}
    requests = [r for r in records if r["kind"] == "model_request"]
    replies = [r for r in records if r["kind"] == "model_reply"]
    assert len(requests) == len(replies) == len(piped_run.llm.requests) == 6
    assert {r["role"] for r in requests} == {"orchestrator", "researcher"}
    assert all(r["model"] == "test-model" and r["messages"] for r in requests)
    assert all(r["tokens_in"] > 0 and r["tokens_out"] > 0 and r["seconds"] >= 0 for r in replies)
    research_calls = [c for r in replies for c in r.get("tool_calls", [])]
    assert [c["name"] for c in research_calls].count("research") == 2
    tools = [r["name"] for r in records if r["kind"] == "tool_end"]
    assert sorted(name.split(":")[0] for name in tools) == ["research"] * 2 + ["search"] * 2
    searches = [r for r in records if r.get("event") == "search"]
    # Two researchers, one search each, from shares of 13 and 12 of the cap of 25.
    assert sorted((r["sent"], r["share"]) for r in searches) == [(1, 12), (1, 13)]
    assert {r["cap"] for r in searches} == {25}
    assert sum(len(r["urls"]) for r in records if r.get("event") == "search_done") == 10


def test_traffic_log_and_report_redact_keys(piped_run: FinishedRun) -> None:
    # The key really was in play: sent as a header, and quoted in the researchers' replies
    # (redacted in the log below); the findings passed on to the orchestrator never carry it.
    assert set(piped_run.llm.auth_headers) == {f"Bearer {LLM_KEY}"}
    assert not any(LLM_KEY in json.dumps(body) for body in piped_run.llm.requests)
    text = piped_run.log.read_text()
    assert LLM_KEY not in text and TAVILY_KEY not in text
    assert f"Authorization: Bearer {REDACTED}" in text
    for report in (piped_run.cwd / "reports").glob("*.md"):
        assert LLM_KEY not in report.read_text()


def test_replay_prints_a_readable_timeline(
    piped_run: FinishedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(piped_run.log)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert re.fullmatch(r"\+\s+0\.00s  run start\s+How well do heat pumps.*", lines[0])
    assert any(re.search(r"orchestrator\s+← research\(\{\"topic\": \"heat pump", x) for x in lines)
    assert any(re.search(r"tool\s+search: heat pump installation costs 0\s+\[\d", x) for x in lines)
    assert any("progress      search 2/25:" in x for x in lines)
    assert any("progress      research done: heat pump" in x for x in lines)
    assert "Totals" in lines and any(re.search(r"researcher\s+4 calls", x) for x in lines)
    assert LLM_KEY not in out


def test_replay_takes_the_thread_id_that_runs_shows(piped_run: FinishedRun) -> None:
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "HOME")}
    env |= {"PYTHONPATH": str(REPO), "DEEP_RESEARCH_DOTENV": "0"}
    runs = run_cli(piped_run.cwd, env, "runs")
    thread = runs.stdout.splitlines()[1].split()[0]
    assert thread == piped_run.log.stem
    by_id = run_cli(piped_run.cwd, env, "replay", thread)
    by_path = run_cli(piped_run.cwd, env, "replay", str(piped_run.log))
    assert by_id.returncode == 0 and by_id.stdout == by_path.stdout, by_id.stderr
    assert "run start" in by_id.stdout
    unknown = run_cli(piped_run.cwd, env, "replay", "0badc0de")
    assert unknown.returncode == 2
    assert "no run '0badc0de' in this directory (deep-research runs lists them)" in unknown.stderr


def test_runs_lists_the_finished_run(
    piped_run: FinishedRun, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(piped_run.cwd)
    assert main(["runs"]) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split() == [
        "thread",
        "started",
        "status",
        "searches",
        "sources",
        "cost",
        "question",
        "report",
        "or",
        "error",
    ]
    assert line.startswith(piped_run.log.stem) and " done " in line and QUESTION in line
    # The searches the run sent, as its summary and the search API count them.
    searches = header.index("searches") + len("searches")
    assert line[:searches].endswith(f" {len(piped_run.tavily.queries)}"), line
    # What it cost: local models are free, each Tavily search one $0.008 credit.
    cost = header.index("cost") + len("cost")
    assert line[:cost].endswith(f" ${0.008 * len(piped_run.tavily.queries):,.4f}"), line
    [report] = (piped_run.cwd / "reports").glob("*.md")
    assert line.endswith(f"reports/{report.name}")
    # Columns line up under the header.
    assert line.index(" done ") + 1 == header.index("status")
    assert line.index(QUESTION) == header.index("question")


def test_terminal_run_asks_the_questions_and_uses_the_answer(tmp_path: Path) -> None:
    answer = "Nordic climate, detached homes"
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        proc, leader = start_in_terminal(tmp_path, env, QUESTION)
        seen = bytearray()
        try:
            read_until(leader, b"> ", seen)
            os.write(leader, answer.encode() + b"\n")
            code = finish_in_terminal(proc, leader, seen)
            assert code == 0, seen.decode(errors="replace")
        finally:
            os.close(leader)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        bodies = llm.requests
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))
    assert "round 1" in screen and "1. Which climate zone?" in screen
    assert "2. Home or commercial buildings?" in screen and "Report saved:" in screen
    assert "%|" not in screen and "Loading weights" not in screen, "only our live view"
    assert [role_of(b) for b in bodies].count("clarifier") == 1
    orchestrator = [b for b in bodies if role_of(b) == "orchestrator"]
    assert all(answer in _texts(b, "user") for b in orchestrator), "the answer reached the plan"
    assert next((tmp_path / "reports").glob("*.md")).read_text().startswith("# ")


def test_a_server_that_echoes_the_key_in_its_error_never_gets_it_printed(tmp_path: Path) -> None:
    def echoing(body: dict[str, Any]) -> Reply:
        return Reply(status=401, error_message=f"invalid key: Bearer {LLM_KEY}")

    with ScriptedOpenAIServer(echoing) as llm, FakeTavilyServer() as tavily:
        result = run_cli(tmp_path, cli_env(llm, tavily, tmp_path), "--no-clarify", QUESTION)
    assert result.returncode == 1, result.stderr
    assert LLM_KEY not in result.stderr + result.stdout
    assert REDACTED in result.stderr and "401" in result.stderr
