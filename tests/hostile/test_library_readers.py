"""Threat: small documents that cost a reader without bound. A 1 KB DOCX whose table cell
spans two billion columns took past 2 GB in 20 s; a PDF of 2,000 pages drawing one 70 MB
content stream stalled `library add` for ten minutes. Both are read within bounds, and
the notes beside them are indexed. The CLI runs as a subprocess, with real Chroma and real
MiniLM, under a wrapper that reports the peak memory of the CLI and of its readers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.library.worker import MAX_READER_MEMORY
from tests.support.cli import cli_command, library_env
from tests.support.documents import write_shared_content_pdf, write_wide_cell_docx

pytestmark = pytest.mark.slow  # starts the CLI as a subprocess

# Runs the command after it and prints the peak resident memory, in KB, of every process
# it waited for: the CLI, and through it each reader child.
PEAK = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(code)"
)


def test_a_wide_table_cell_and_pages_sharing_a_huge_stream_stay_bounded(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a-notes.md").write_text("# Heat pumps\n\nThey work at minus twenty degrees.\n")
    write_wide_cell_docx(docs / "b-wide.docx")
    write_shared_content_pdf(docs / "c-shared.pdf", pages=2_000, drawn=70_000_000)
    (docs / "d-notes.txt").write_text("District heating reaches most homes in Denmark.")
    assert (docs / "c-shared.pdf").stat().st_size < 1_000_000

    command = [sys.executable, "-c", PEAK, *cli_command("library", "add", str(docs))]
    with subprocess.Popen(
        command,
        env=library_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a regression's CLI is killed with the wrapper
    ) as wrapper:
        try:  # a deadline for a regression that would never end, not a speed check
            stdout, stderr = wrapper.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            os.killpg(wrapper.pid, signal.SIGKILL)
            raise
    assert wrapper.returncode == 0, stderr
    lines = stdout.splitlines()
    assert any("added" in line and "a-notes.md (1 chunk)" in line for line in lines)
    assert any("added" in line and "b-wide.docx (1 chunk)" in line for line in lines)
    assert any(
        "added" in line
        and "c-shared.pdf (1 chunk; cut after page 1: its pages draw over 100 MB of content)"
        in line
        for line in lines
    ), stdout
    assert any("added" in line and "d-notes.txt (1 chunk)" in line for line in lines)
    assert lines[-1].startswith("Done: 4 added,")
    peak_kb = int(stderr.splitlines()[-1])
    assert peak_kb * 1024 < MAX_READER_MEMORY, f"peak resident memory {peak_kb // 1024} MB"
