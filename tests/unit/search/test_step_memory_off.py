"""With memory off and no library, a search step never imports chromadb (about 3 s of CPU
per process) nor creates a store: checked in a fresh interpreter, where nothing else has."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import CLI_TIMEOUT, REPO

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

OPEN_A_SEARCH_STEP = """
import asyncio, sys
from deep_research.config.settings import Context
from deep_research.search import step
from deep_research.search.budget import Grant

async def main():
    grant = Grant(granted=1, share=1, counted_before=0, cap=1)
    context = Context(use_memory=False, search_provider="ddgs")
    async with step.session(context, run_key="r", owner="o", topic="t", grant=grant):
        pass

asyncio.run(main())
print("chromadb loaded:", "chromadb" in sys.modules)
"""


def test_a_search_step_with_memory_off_and_no_library_never_imports_chromadb(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    done = subprocess.run(
        [sys.executable, "-c", OPEN_A_SEARCH_STEP],
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(REPO),
            "DEEP_RESEARCH_DOTENV": "0",
            "MEMORY_DIR": str(memory),
        },
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "chromadb loaded: False"
    assert not memory.exists()
