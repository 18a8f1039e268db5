"""README.md is a test: its setup block is what CI runs, and its Python snippets run as written.

The setup block is compared line for line with `.ci/run`'s install lines, so a README that
breaks breaks CI. The "From Python" snippet is executed with top-level `await` (as in Jupyter
or `python -m asyncio`) against the scripted model server and the fake Tavily API.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.brain import LINK, ResearchBrain, role_of
from tests.support.fakes.openai_server import ScriptedOpenAIServer, system_text
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.readme import README, REPO, block_after, run_with_top_level_await, section

CI_RUN = (REPO / ".ci" / "run").read_text(encoding="utf-8")
# Only the CPU wheel's index differs: CI reaches PyPI alone, where this machine's wheel is.
INDEX_URL = re.compile(r" --index-url \S+")


def ci_setup_lines() -> list[str]:
    body = CI_RUN.split("# >>> README Quickstart setup", 1)[1]
    body = body.split("\n", 1)[1].split("# <<<", 1)[0]
    return [line for line in body.splitlines() if line.strip() and not line.startswith("#")]


def test_ci_installs_exactly_as_the_readme_quickstart_says() -> None:
    readme = block_after("<!-- quickstart-setup").strip().splitlines()
    assert readme, "the Quickstart has a setup block"
    assert any("--index-url" in line for line in readme), "Linux users get the CPU wheel"
    assert [INDEX_URL.sub("", line) for line in readme] == ci_setup_lines()


def test_ci_uses_the_pip_python_ships_and_runs_the_readme_test_command() -> None:
    assert "pip install --upgrade pip" not in CI_RUN and "-U pip" not in CI_RUN
    command = block_after("Run the tests", section("## Quickstart")).strip()
    assert command == "python -m pytest"
    assert CI_RUN.rstrip().splitlines()[-1] == command
    assert block_after("\n## Test\n").strip() == command


def test_the_torch_pin_matches_between_readme_and_ci() -> None:
    pins = re.findall(r"torch==[\d.]+", block_after("<!-- quickstart-setup"))
    assert len(pins) == 1 and pins[0] in CI_RUN


def test_what_the_package_imports_is_a_direct_dependency() -> None:
    """pip before 23.3 skips extras such as lxml[html_clean]; name the package itself."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=\[; ]", spec)[0].lower() for spec in project["dependencies"]}
    assert "lxml_html_clean" in names
    assert not [spec for spec in project["dependencies"] if "[" in spec]
    import lxml_html_clean  # noqa: F401  # the module justext imports at run time


def test_the_notebook_extra_brings_jupyter_and_dev_includes_it() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = extras["optional-dependencies"]
    assert any(spec.startswith("jupyterlab") for spec in extras["notebook"])
    assert "deep_research[notebook]" in extras["dev"]
    assert 'pip install -e ".[notebook]"' in section("### In a notebook")
    assert shutil.which("jupyter-lab", path=str(Path(sys.executable).parent))


async def test_the_from_python_snippet_runs_as_written_and_keeps_its_context_on_resume(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    snippet = block_after("```python", section("### From Python"))
    assert "context=context" in snippet.split("Command(resume=", 1)[1]
    with ScriptedOpenAIServer(ResearchBrain()) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            await run_with_top_level_await(snippet)
        bodies = llm.requests
    printed = output.getvalue()
    assert "Which climate zone?" in printed, "the clarifying questions are printed"
    cited = set(LINK.findall(printed))
    assert cited and cited <= tavily.returned_urls, printed
    orchestrator = [body for body in bodies if role_of(body) == "orchestrator"]
    assert orchestrator, "the resumed run reached the orchestrator"
    assert all("15 searches" in system_text(body) for body in orchestrator)


def test_the_readme_says_studio_is_hosted_and_the_api_works_offline() -> None:
    text = section("### Through the Agent Server and Studio")
    assert "hosted" in text and "internet" in text and "2024" in text


def test_every_python_snippet_says_where_top_level_await_works() -> None:
    assert "python -m asyncio" in README and "Jupyter" in README


MCP_URL = "http://127.0.0.1:2024/mcp"


def test_the_mcp_client_configs_are_valid_json_pointing_at_the_server() -> None:
    text = section("### As an MCP tool (Claude Desktop, Cursor, VS Code)")
    configs = {
        client: json.loads(block_after(f"**{client}**", text))
        for client in ("Claude Desktop", "Cursor", "VS Code")
    }
    # Claude Desktop's file starts commands: mcp-remote bridges to the URL.
    desktop = configs["Claude Desktop"]["mcpServers"]["deep_research"]
    assert desktop["command"] == "npx" and desktop["args"][-1] == MCP_URL
    assert configs["Cursor"]["mcpServers"]["deep_research"] == {"url": MCP_URL}
    assert configs["VS Code"]["servers"]["deep_research"] == {"type": "http", "url": MCP_URL}
    assert json.loads((REPO / "langgraph.json").read_text())["http"] == {
        "app": "deep_research.mcp:app",
        "disable_mcp": True,
    }
