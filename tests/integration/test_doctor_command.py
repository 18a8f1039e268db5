"""`deep-research doctor` as a command: bad settings in one line, a good setup passed and a
bad one failed (in JSON for scripts) without writing anything, and the search page's
render-pages command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.cli.main import main
from tests.support.cli import cli_env, run_cli
from tests.support.doctor import native, point_at
from tests.support.fakes.http_server import closed_port
from tests.support.fakes.openai_server import (
    ScriptedOpenAIServer,
)
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.readme import REPO, block_after


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--search", "bing"], "search_provider='bing'"),
        (["--search", "tavily"], "needs TAVILY_API_KEY"),
        (["--timeout", "0"], "--timeout wants 0 < SECONDS <= 600"),
        (["--set", "max_researcher_turns=99"], "less than or equal to 20"),
    ],
)
def test_a_bad_configuration_is_one_line_and_exit_code_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


@pytest.mark.slow
def test_the_command_passes_a_good_setup_and_leaves_nothing_behind(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(native) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        result = run_cli(tmp_path, env, "doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    checks = [line.split(":")[0].split(None, 1) for line in lines[:-1]]
    assert {status for status, _ in checks} == {"ok"}, result.stdout
    named = [name.split(" (")[0] for _, name in checks]
    assert named == [
        "settings",
        "endpoint",
        "model name",
        "tool calls",
        "tool result",
        "search tavily",
        "relevance model",
        "checkpoint dir",
        "checkpoints",
        "report dir",
        "memory",
        "tracing",
        "page rendering",
    ], result.stdout
    assert any(
        line.startswith("ok    relevance model: all-MiniLM-L6-v2 from ")
        and "SHA-256 checked, loaded in" in line
        for line in lines
    ), "where the model's files are, and that they were checked"
    assert lines[-1] == "Ready: a run can succeed (0 warnings)."
    output = result.stdout + result.stderr
    assert env["LLM_API_KEY"] not in output and env["TAVILY_API_KEY"] not in output
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "doctor writes nothing"


def test_the_command_fails_a_bad_setup_with_json_for_scripts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    point_at(monkeypatch, f"http://127.0.0.1:{closed_port()}/v1")
    with FakeTavilyServer() as tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-any-key")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        code = main(["doctor", "--json", "--timeout", "3"])
    assert code == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ready"] is False
    statuses = {check["name"]: check["status"] for check in report["checks"]}
    assert statuses["endpoint (clarifier, orchestrator, researcher)"] == "fail"
    assert statuses["search tavily"] == statuses["relevance model"] == "ok"
    assert all(set(check) == {"name", "status", "detail", "fix"} for check in report["checks"])


CI_RUN = (REPO / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_search_page_s_render_pages_doctor_command_names_the_browser(tmp_path: Path) -> None:
    setup = block_after("<!-- render-pages-setup").strip().splitlines()
    assert setup[0] == 'pip install -e ".[browser]"', "the extra dev brings (pyproject.toml)"
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(need.startswith("playwright") for need in extras["browser"])
    assert "deep_research[browser]" in extras["dev"], "CI's dev install is the line's install"
    assert "apt-get install chromium" in setup[1] and "chromium" in CI_RUN
    command = setup[-1].split()
    assert command[0] == "RENDER_PAGES=true" and command[1:] == ["deep-research", "doctor"]
    with ScriptedOpenAIServer(native) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path) | {"RENDER_PAGES": "true"}
        result = run_cli(tmp_path, env, *command[2:])
    assert result.returncode == 0, result.stdout + result.stderr
    (line,) = [line for line in result.stdout.splitlines() if "page rendering" in line]
    assert line.startswith("ok    page rendering: on: /usr/bin/chromium (Chromium "), line
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "doctor writes nothing"
