"""`deep-research library add | list | remove` as a user runs it: a subprocess, real Chroma
and real MiniLM, a folder of mixed and hostile files."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from tests.support.cli import cli_env, library_env, run_cli
from tests.support.documents import write_pdf
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.library_brain import FILE_LINK, LibraryBrain
from tests.support.readme import block_after

pytestmark = pytest.mark.slow  # starts a subprocess or a server process


def test_add_list_remove_a_folder_of_mixed_and_hostile_files(tmp_path: Path) -> None:
    env = library_env(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "energy.pdf", ["Solar output rose.", "Wind output rose too."])
    (docs / "notes.md").write_text("# Notes\n\nHeat pumps work in the cold.\n")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7\n" + os.urandom(300))
    (docs / "junk.txt").write_bytes(os.urandom(2000))
    (docs / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    (docs / "escape\x1b[31m.txt").write_text("a name with a terminal escape")
    (docs / "two\nlines.md").write_text("a name with a newline")
    (docs / "out.txt").symlink_to("/etc/hostname")

    added = run_cli(tmp_path, env, "library", "add", str(docs))
    assert added.returncode == 0, added.stderr
    lines = added.stdout.splitlines()
    assert any("added" in line and "energy.pdf (2 chunks)" in line for line in lines)
    assert any(
        "unreadable" in line and "broken.pdf (pdf could not be parsed" in line for line in lines
    )
    assert any("junk.txt (binary content, not text)" in line for line in lines)
    assert any("skipped" in line and "symlink leads outside the folder" in line for line in lines)
    assert "\x1b" not in added.stdout  # file names are printed inert, on one line each
    assert any(line.endswith("two\\nlines.md (1 chunk)") for line in lines)
    assert lines[-1] == (
        "Done: 4 added, 0 updated, 0 unchanged, 1 unsupported, 0 oversized, 1 skipped, "
        "2 unreadable."
    )

    again = run_cli(tmp_path, env, "library", "add", str(docs / "notes.md"))
    assert again.stdout.splitlines()[-1].startswith("Done: 0 added, 0 updated, 1 unchanged")

    removed = run_cli(tmp_path, env, "library", "remove", str(docs / "notes.md"))
    assert removed.returncode == 0 and f"removed {(docs / 'notes.md').resolve()}" in removed.stdout

    listed = run_cli(tmp_path, env, "library", "list")
    assert listed.returncode == 0, listed.stderr
    assert f"{(docs / 'energy.pdf').resolve()}  (pdf, 2 pages, 2 chunks, added " in listed.stdout
    assert "notes.md" not in listed.stdout
    assert listed.stdout.splitlines()[-1] == f"3 documents in {tmp_path / 'memory'}"


def test_library_usage_errors_are_one_line(tmp_path: Path) -> None:
    env = library_env(tmp_path)
    for args, message in [
        ((), "usage: deep-research library add"),
        (("add",), "library add needs at least one file or folder"),
        (("remove", "a", "b"), "library remove takes one file or folder"),
    ]:
        result = run_cli(tmp_path, env, "library", *args)
        assert result.returncode == 2 and message in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_the_readme_library_commands_run_as_written_and_stay_off_the_web(tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    pdf = write_pdf(
        tmp_path / "papers" / "cold.pdf",
        ["Heat pumps keep heating at minus twenty degrees.", "Installers size them larger."],
    )
    (tmp_path / "notes.md").write_text("# Notes\n\nHeat pumps in the cold need a backup.\n")
    lines = block_after("<!-- library-commands").strip().splitlines()
    with ScriptedOpenAIServer(LibraryBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        results = []
        for line in lines:
            program, *args = shlex.split(line)
            assert program == "deep-research"
            results.append(run_cli(tmp_path, env, *args))
            assert results[-1].returncode == 0, (line, results[-1].stdout, results[-1].stderr)
        assert tavily.queries == []  # private-only: nothing reached the web search
    added, listed, research, removed = (result.stdout for result in results)
    assert "Done: 2 added" in added and "2 documents in" in listed
    [report] = (tmp_path / "reports").glob("*.md")
    cited = set(FILE_LINK.findall(report.read_text()))
    assert f"{pdf.resolve().as_uri()}#page=1" in cited
    assert "cold.pdf, page 1" in report.read_text().split("## Sources")[1]
    assert f"removed {pdf.resolve()}" in removed
