"""A run and the relevance model's files: stopped before any model call when they are
missing, downloaded (with a bar) on a first run, gone without only when asked.

The CLI runs as a user's would, except that the weights package installed for the tests
is hidden (`files.PACKAGE` renamed in the child), as on a machine without it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.embedding import files
from tests.support.brain import ResearchBrain
from tests.support.cli import CLI_TIMEOUT, QUESTION, cli_env, run_cli
from tests.support.fakes.hub_server import FakeHub
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts the CLI as a subprocess

WITHOUT_PACKAGE = (
    "import sys; from deep_research.embedding import files; "
    "files.PACKAGE = 'no_such_weights_package'; "
    "from deep_research.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def _run(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_PACKAGE, "--no-clarify", QUESTION],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )


def test_no_model_anywhere_stops_the_run_before_any_model_call(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path) | {"HF_HUB_OFFLINE": "1"}
        result = _run(tmp_path, env)
        assert result.returncode == 1, result.stderr
        assert "HF_HUB_OFFLINE forbids downloading it" in result.stderr
        assert files.OFFLINE_LINE in result.stderr and "Traceback" not in result.stderr
        assert "Thread " not in result.stdout, "no run was started"
        assert llm.requests == [] and tavily.requests == []

        # Asked to go on without relevance filtering: the same machine researches.
        env["RELEVANCE_FILTER"] = "false"
        done = _run(tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert "Report saved:" in done.stdout and llm.requests


def test_a_first_run_downloads_the_model_with_a_bar_then_researches(tmp_path: Path) -> None:
    found = files.locate()
    assert found is not None
    hub = FakeHub(found.folder, files.REPO_ID, files.REVISION, list(files.SHA256))
    with hub, ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path) | {"HF_ENDPOINT": hub.url}
        result = _run(tmp_path, env)
        assert result.returncode == 0, result.stderr
        assert (
            f"Downloading the relevance model all-MiniLM-L6-v2 (about 91 MB, once) from {hub.url}"
            in result.stderr
        )
        assert "model.safetensors" in result.stderr and "100%" in result.stderr
        cached = tmp_path / ".cache" / "huggingface" / "hub"
        assert list(cached.glob("models--*/snapshots/*/model.safetensors")), "in HOME's cache"
        assert "Report saved:" in result.stdout
        # A second run finds the cache: nothing is downloaded again.
        before = len([r for r in hub.requests() if r[1].startswith("/lfs/")])
        again = _run(tmp_path, env | {"HF_HUB_OFFLINE": "1"})
        assert again.returncode == 0, again.stderr
        assert "Downloading" not in again.stderr
        assert len([r for r in hub.requests() if r[1].startswith("/lfs/")]) == before


def test_without_filtering_memory_goes_unused_and_nothing_is_downloaded(tmp_path: Path) -> None:
    """RELEVANCE_FILTER=false on a machine without the model: memory (on by default) says it
    is unavailable, the report is saved, and no byte is fetched, even with a hub in reach."""
    found = files.locate()
    assert found is not None
    hub = FakeHub(found.folder, files.REPO_ID, files.REVISION, list(files.SHA256))
    with hub, ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path) | {
            "HF_ENDPOINT": hub.url,
            "RELEVANCE_FILTER": "false",
            "USE_MEMORY": "true",
            "MEMORY_DIR": str(tmp_path / "memory"),
        }
        result = _run(tmp_path, env)
        assert result.returncode == 0, result.stderr
        assert "Report saved:" in result.stdout
        assert "memory needs the relevance model" in result.stdout + result.stderr
        assert hub.requests() == [], "a run without filtering never fetches the model"


def test_onnxruntime_that_does_not_import_leaves_results_unscored_and_the_run_researching(
    tmp_path: Path,
) -> None:
    """A wheel this machine cannot load (here an `onnxruntime` ahead on the path that
    raises ImportError): every search's results are kept in the provider's order, the CLI
    says so once with the fix, and the report is a finished one."""
    shadow = tmp_path / "shadow" / "onnxruntime"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        'raise ImportError("libonnxruntime.so: cannot open shared object file")\n'
    )
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, home)
        env["PYTHONPATH"] = f"{shadow.parent}{os.pathsep}{env['PYTHONPATH']}"
        done = run_cli(work, env, "--no-clarify", QUESTION)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("relevance not scored, results kept in the search's order") == 1
    assert "pip install --force-reinstall 'onnxruntime>=1.19'" in done.stdout
    assert "research failed" not in done.stdout
    assert re.search(r"^status +complete$", done.stdout, re.M), done.stdout
