"""`deep-research memory list` and `library list` answer from Chroma's catalogue: they
import neither chromadb nor the model, and list what the store holds after adds, removes
and forgets, even while another process holds the memory's lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import CLI_TIMEOUT, library_env, run_cli

pytestmark = pytest.mark.slow  # starts a subprocess or a server process

HEAVY = ("chromadb", "langchain_chroma", "deep_research.embedding.minilm", "trafilatura")
# The two listings in one process, then which heavy modules they brought in.
LISTINGS = f"""
import sys
from deep_research.cli.main import main

assert main(["library", "list"]) == 0
assert main(["memory", "list"]) == 0
print("heavy modules loaded:", [name for name in {HEAVY!r} if name in sys.modules])
"""
# Writes two reports, as the graph's `remember` node does, then prints what the store holds.
REMEMBER = """
import asyncio, sys
from deep_research.memory import LIBRARY_COLLECTION, open_store
from deep_research.memory.research import remember, remembered_threads

async def main():
    store = await open_store()
    if sys.argv[1] == "write":
        for thread, question in (("thread-one", "Heat pumps in Norway?"), ("thread-two", "Tides?")):
            await remember(store, thread_id=thread, question=question, report="R.", cited=[])
    for report in await remembered_threads(store):
        print("report", report.date, report.thread, report.question)
    for key in sorted({hit.key for hit in await store.items(LIBRARY_COLLECTION, texts=False)}):
        print("document", key)

asyncio.run(main())
"""


def _python(cwd: Path, env: dict[str, str], code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _listed(cwd: Path, env: dict[str, str]) -> tuple[set[str], set[str]]:
    """(documents, reports) as the two listing commands show them."""
    documents = run_cli(cwd, env, "library", "list")
    reports = run_cli(cwd, env, "memory", "list")
    assert documents.returncode == 0 and reports.returncode == 0, documents.stderr + reports.stderr
    paths = {line.split("  (")[0] for line in documents.stdout.splitlines() if "  (" in line}
    rows = {" ".join(line.split()) for line in reports.stdout.splitlines()[1:]}
    return paths, rows


def _held(cwd: Path, env: dict[str, str], *args: str) -> tuple[set[str], set[str]]:
    """(documents, reports) as chromadb reads the store."""
    lines = _python(cwd, env, REMEMBER, *args).splitlines()
    documents = {line.removeprefix("document ") for line in lines if line.startswith("document")}
    reports = {line.removeprefix("report ") for line in lines if line.startswith("report")}
    return documents, reports


def test_the_listings_show_what_the_store_holds_without_chromadb_or_the_model(
    tmp_path: Path,
) -> None:
    env = library_env(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a.md", "b.md", "c.txt"):
        (docs / name).write_text(f"# {name}\n\nHeat pumps work in the cold, says {name}.\n")

    assert _python(tmp_path, env, LISTINGS).splitlines()[-1] == "heavy modules loaded: []"
    assert not (tmp_path / "memory").exists()  # listing an empty memory makes nothing

    assert run_cli(tmp_path, env, "library", "add", str(docs)).returncode == 0
    held = _held(tmp_path, env, "write")
    assert len(held[0]) == 3 and len(held[1]) == 2
    assert _listed(tmp_path, env) == held

    assert run_cli(tmp_path, env, "library", "remove", str(docs / "b.md")).returncode == 0
    assert run_cli(tmp_path, env, "memory", "forget", "thread-one").returncode == 0
    held = _held(tmp_path, env, "read")
    assert len(held[0]) == 2 and [row.split()[1] for row in held[1]] == ["thread-two"]
    assert _listed(tmp_path, env) == held
    assert _python(tmp_path, env, LISTINGS).splitlines()[-1] == "heavy modules loaded: []"


def test_the_listings_answer_while_another_process_holds_the_memory(tmp_path: Path) -> None:
    env = library_env(tmp_path)
    (tmp_path / "a.md").write_text("# A\n\nSalmon spawn upstream.\n")
    assert run_cli(tmp_path, env, "library", "add", str(tmp_path / "a.md")).returncode == 0
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.support.memory_writer", "hold"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        listed = run_cli(tmp_path, env, "library", "list")
        assert listed.returncode == 0, listed.stderr
        assert f"{(tmp_path / 'a.md').resolve()}  (markdown, 1 chunk" in listed.stdout
        assert run_cli(tmp_path, env, "memory", "list").stdout.endswith(": 0 reports\n")
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=CLI_TIMEOUT)
