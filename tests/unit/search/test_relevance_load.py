"""Loading the relevance model prints nothing and pulls in no deep-learning framework.

It runs in a fresh interpreter (the load happens once per process) with an explicit
environment, so nothing from a developer's shell (`TQDM_DISABLE`, a warm import) hides a
bar or an import.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.cli import CLI_TIMEOUT, REPO

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

LOAD_AND_REPORT = """
import sys
import asyncio
from deep_research.search.types import SearchResult
from deep_research.search.relevance import score_results

results = [SearchResult("https://a.example/1", "Heat pumps in cold climates", ""),
           SearchResult("https://a.example/2", "Tax law in Peru", "")]
scores = asyncio.run(score_results("heat pumps", results))
assert scores[0] > 0.5 > scores[1], scores
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules)
print("heavy modules:", heavy)
"""


def test_relevance_model_loads_quietly_without_torch() -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_REPORT],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    assert done.stdout.splitlines() == ["heavy modules: []"]
