"""`deep-research --help` answers without importing the graph, `Context` or the model stack,
and names every provider and setting it accepts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from deep_research.config.names import MODEL_PROVIDERS, SEARCH_CHOICES, SETTING_NAMES
from deep_research.config.settings import Context
from tests.support.cli import CLI_TIMEOUT, REPO

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

HEAVY = (
    "deep_research.graph",
    "deep_research.config.settings",
    "langgraph",
    "langchain_core",
    "torch",
    "chromadb",
)
HELP_AND_REPORT_IMPORTS = f"""
import contextlib, io, sys
from deep_research.cli.main import main

out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["--help"])
    except SystemExit as done:
        assert done.code == 0, done.code
loaded = [name for name in {HEAVY!r} if name in sys.modules]
print(out.getvalue())
print("heavy modules loaded:", loaded)
"""


def help_text() -> str:
    done = subprocess.run(
        [sys.executable, "-c", HELP_AND_REPORT_IMPORTS],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_help_imports_neither_the_graph_nor_context_nor_the_model_stack() -> None:
    assert help_text().splitlines()[-1] == "heavy modules loaded: []"


def test_help_lists_every_search_provider_model_provider_and_setting() -> None:
    text = " ".join(help_text().split())  # argparse wraps lines
    scholarly = "arxiv, wikipedia, openalex"
    assert (
        f"--search PROVIDER search provider: auto, tavily, searxng, ddgs, library, {scholarly} "
        "or europepmc" in text
    )
    assert (
        f"auto, tavily, searxng, ddgs, library, {scholarly}, europepmc. auto: tavily when "
        "TAVILY_API_KEY is set" in text
    )
    assert "arxiv, openalex, europepmc: papers' abstracts; wikipedia: articles (keyless)" in text
    assert "library: only the documents added with deep-research library add" in text
    assert "model providers (--model, --set ROLE_model=provider:model): local: the" in text
    assert all(name in text for name in MODEL_PROVIDERS) and 'pip install -e ".[anthropic]"' in text
    assert all(name in text for name in SETTING_NAMES)


def test_the_light_lists_match_context() -> None:
    assert SETTING_NAMES == tuple(Context.model_fields)
    annotation = Context.model_fields["search_provider"].annotation
    assert SEARCH_CHOICES == annotation.__args__  # type: ignore[union-attr]
