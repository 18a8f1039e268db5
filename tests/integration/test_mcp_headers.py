"""An HTTP MCP server's headers: sent on every request, seen nowhere else.

The key's variable (`PAPERS_AUTH`) is not named like a credential, so no redactor knows
its value: only never writing it anywhere keeps it out of the CLI's output and files, the
report, the model's requests, the LangSmith traces and `doctor`'s lines, also when the
server refuses the key and echoes the one it got.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import QUESTION, cli_env, run_cli
from tests.support.fakes.langsmith_server import FakeLangSmithServer
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.mcp_config import McpBrain, http_server

SECRET = "papers-key-0d94be21c6"


def everything_under(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode(errors="replace") for p in root.rglob("*") if p.is_file()
    )


@pytest.mark.slow
def test_an_http_server_s_key_is_sent_and_never_written_anywhere(tmp_path: Path) -> None:
    keys = tmp_path / "keys.log"
    with (
        http_server("auth", MCP_EXPECTED_KEY=SECRET, MCP_HEADER_LOG=str(keys)) as url,
        ScriptedOpenAIServer(McpBrain(["heat pumps"])) as llm,
        FakeTavilyServer() as tavily,
        FakeLangSmithServer() as langsmith,
    ):
        servers = tmp_path / "mcp.json"
        entry = {"url": url, "headers": {"X-Api-Key": "${PAPERS_AUTH}"}}
        servers.write_text(json.dumps({"mcpServers": {"papers": entry}}))
        env = {
            **cli_env(llm, tavily, tmp_path),
            "MCP_SERVERS_FILE": str(servers),
            "PAPERS_AUTH": SECRET,
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": langsmith.url,
            "LANGSMITH_API_KEY": "corp-trace-5521aa90cc",
            "LANGSMITH_PROJECT": "deep-research-test",
        }
        run = run_cli(tmp_path, env, "--no-clarify", QUESTION)
        doctor = run_cli(tmp_path, env, "doctor", "--json")
        refused = run_cli(tmp_path, {**env, "PAPERS_AUTH": "wrong-" + SECRET}, "doctor")
        bodies, traces = json.dumps(llm.requests), langsmith.received
    assert run.returncode == 0, run.stderr
    [report] = (tmp_path / "reports").glob("*.md")
    assert "https://papers.example/heat0" in report.read_text(), "the tool answered"
    assert SECRET in keys.read_text().splitlines(), "the key was sent"
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["mcp papers"]["status"] == "ok", checks["mcp papers"]
    assert "mcp papers: the server answered with an error" in refused.stdout, "refused: a 401"
    assert traces, "traces were sent"
    seen = {
        "the run's output": run.stdout + run.stderr,
        "doctor": doctor.stdout + doctor.stderr + refused.stdout + refused.stderr,
        "the report": report.read_text(),
        "checkpoints and traffic log": everything_under(tmp_path / ".deep_research"),
        "the model's requests": bodies,
        "the traces": "\n".join(
            f"{t.path} {dict(t.headers)} {t.body.decode(errors='replace')}" for t in traces
        ),
    }
    for where, text in seen.items():
        assert SECRET not in text, f"the header's value leaked into {where}"
