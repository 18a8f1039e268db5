"""The `deep-research` CLI on Anthropic's API (a local fake): summary, traffic log, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.brain import LINK, ResearchBrain
from tests.support.cli import QUESTION, cli_env, run_cli, traffic_records
from tests.support.fakes.anthropic_server import FakeAnthropicServer
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

KEY = "sk-ant-test-SECRET-0123456789abcdef"
SPEC = "anthropic:claude-sonnet-4-5"


def test_a_piped_run_on_anthropic_counts_its_tokens(tmp_path: Path) -> None:
    with (
        FakeAnthropicServer(ResearchBrain()) as anthropic,
        ScriptedOpenAIServer(ResearchBrain()) as unused_local,
        FakeTavilyServer() as tavily,
    ):
        env = {
            **cli_env(unused_local, tavily, tmp_path),
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": anthropic.url,
        }
        result = run_cli(tmp_path, env, "--model", SPEC, QUESTION)
        assert result.returncode == 0, result.stderr
        assert unused_local.requests == [], "every role went to the provider named"
    out = result.stdout
    assert re.search(r"orchestrator\s+2 calls\s+[\d,]+ tokens in\s+\d+ out", out), out
    [report] = (tmp_path / "reports").glob("*.md")
    assert set(LINK.findall(report.read_text())) <= tavily.returned_urls
    _, records = traffic_records(tmp_path)
    replies = [r for r in records if r["kind"] == "model_reply"]
    assert len(replies) == len(anthropic.requests) == 6
    assert all(r["model"] == "claude-sonnet-4-5" for r in replies)
    assert all(r["tokens_in"] > 0 and r["tokens_out"] > 0 for r in replies)
    log_text = "".join(path.read_text() for path in tmp_path.rglob("*.jsonl"))
    assert KEY not in log_text + out + result.stderr


def test_a_missing_integration_is_one_line_and_exit_2_before_anything_is_written(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        result = run_cli(tmp_path, env, "--model", "groq:llama-3.3-70b-versatile", QUESTION)
        missing_key = run_cli(tmp_path, env, "--model", SPEC, QUESTION)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert 'need langchain-groq, which is not installed: pip install -e ".[groq]"' in line
    assert missing_key.returncode == 2
    [line] = missing_key.stderr.splitlines()
    assert "need ANTHROPIC_API_KEY: set it in the environment or .env" in line
    assert not (tmp_path / ".deep_research").exists() and not (tmp_path / "reports").exists()


def test_a_refused_key_ends_the_run_with_one_line_without_it(tmp_path: Path) -> None:
    refuse = lambda body: Reply(status=401, error_message=f"invalid x-api-key {KEY}")  # noqa: E731
    with (
        FakeAnthropicServer(refuse) as anthropic,
        ScriptedOpenAIServer(ResearchBrain()) as unused_local,
        FakeTavilyServer() as tavily,
    ):
        env = {
            **cli_env(unused_local, tavily, tmp_path),
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": anthropic.url,
        }
        result = run_cli(tmp_path, env, "--model", SPEC, QUESTION)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("deep-research: ") and "401" in line, line
    assert KEY not in result.stderr + result.stdout and "Traceback" not in result.stderr
