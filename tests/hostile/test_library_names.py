"""Threat: file names and links a library folder may hold. A name in bytes that are not UTF-8
is reported and the rest of the batch indexed (it reached the store's `where` clause and
ended the batch, blaming memory); a symlink to a folder outside the folder is reported, not
walked and not passed over in silence. The CLI runs as a subprocess on a terminal that takes
UTF-8 only, with real Chroma and real MiniLM."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import library_env, run_cli

pytestmark = pytest.mark.slow  # starts the CLI as a subprocess

LATIN1_NAME = b"latin1-caf\xe9.md"


def test_a_name_that_is_not_utf8_is_reported_and_the_batch_goes_on(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "normal.md").write_text("# Normal\n\nHeat pumps work in cold climates.\n")
    with open(os.path.join(os.fsencode(docs), LATIN1_NAME), "w") as handle:
        handle.write("# Café\n\nAir-source heat pumps at minus twenty.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Not for the library\n")
    (docs / "elsewhere").symlink_to(outside, target_is_directory=True)
    # A terminal that takes UTF-8 only: a raw surrogate printed there ends the process.
    env = {**library_env(tmp_path), "PYTHONIOENCODING": "utf-8:strict"}

    added = run_cli(tmp_path, env, "library", "add", str(docs))
    assert added.returncode == 0, added.stderr
    assert "memory" not in added.stderr and "Invalid where" not in added.stdout + added.stderr
    lines = added.stdout.splitlines()
    assert any("added" in line and "normal.md (1 chunk)" in line for line in lines), lines
    [latin1] = [line for line in lines if "latin1-caf" in line]
    assert "skipped" in latin1 and "latin1-caf\\xe9.md" in latin1 and "not UTF-8" in latin1
    [link] = [line for line in lines if "elsewhere" in line]
    assert "skipped" in link and "outside the folder" in link
    assert not [line for line in lines if "secret.md" in line]
    assert "1 added" in lines[-1] and "2 skipped" in lines[-1]

    listed = run_cli(tmp_path, env, "library", "list")
    assert listed.returncode == 0, listed.stderr
    assert "normal.md" in listed.stdout and "1 document in" in listed.stdout
    assert "secret.md" not in listed.stdout and "latin1" not in listed.stdout
