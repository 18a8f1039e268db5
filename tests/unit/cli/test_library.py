"""cli.library: `library add | list | remove` in process, on a real store in a tmp dir."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from deep_research.cli.args import UsageError
from deep_research.cli.library import (
    LISTED_UNSUPPORTED,
    library,
    path_line,
)
from deep_research.cli.plain import terminal_console

# chromadb's import and MiniLM's load take seconds on a first use.
pytestmark = pytest.mark.slow


def _run(*argv: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    console = terminal_console()
    console.file = out
    code = library(list(argv), console)
    return code, out.getvalue().splitlines()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "usage"),
        (["drop"], "usage"),
        (["add"], "at least one"),
        (["list", "x"], "no arguments"),
        (["remove"], "one file"),
        (["remove", "a", "b"], "one file"),
    ],
)
def test_usage_errors_say_how_before_any_store_opens(argv: list[str], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        library(argv, Console(file=io.StringIO()))


def test_path_line_escapes_newlines_in_file_names() -> None:
    assert path_line(Path("/a/b\nforged line\r.md")) == "/a/b\\nforged line\\r.md"


def test_path_line_shows_bytes_that_are_not_utf8_as_escapes() -> None:
    line = path_line(Path(os.fsdecode(b"/docs/caf\xe9.md")))
    assert line == "/docs/caf\\xe9.md" and line.encode("utf-8")  # printable on any terminal


def test_add_list_remove(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.md").write_text("# Tides\n\nTidal barrages store energy.\n")
    hostile = docs / "evil\n\x1b]0;pwned\x07[link=e.example]x :warning:.md"
    hostile.write_text("a hostile name")
    for n in range(LISTED_UNSUPPORTED + 3):
        (docs / f"photo{n:02}.jpg").write_bytes(b"\xff\xd8")
    code, lines = _run("add", str(docs))
    assert code == 0
    assert lines[0].startswith("Indexing into the library at ")
    assert sum(" unsupported " in line for line in lines) == LISTED_UNSUPPORTED
    assert lines[-1] == (
        f"Done: 2 added, 0 updated, 0 unchanged, {LISTED_UNSUPPORTED + 3} unsupported, "
        "0 oversized, 0 skipped, 0 unreadable."
    )
    output = "\n".join(lines)
    assert "\x1b" not in output and "\x07" not in output
    assert "evil\\n]0;pwned[link=e.example]x :warning:.md" in output  # shown, inert

    code, lines = _run("list")
    assert code == 0 and lines[-1].startswith("2 documents in ")
    assert any("tides.md  (markdown, 1 chunk, added " in line for line in lines)

    assert _run("add", str(docs / "tides.md"))[1][1].split()[1] == "unchanged"
    code, lines = _run("remove", str(docs / "tides.md"))
    assert code == 0 and lines[-1] == "1 document removed."
    assert _run("remove", str(docs / "tides.md")) == (
        1,
        [f"Not in the library: {docs / 'tides.md'}"],
    )


def test_add_of_nothing_readable_fails_and_an_empty_list_says_how_to_add(tmp_path: Path) -> None:
    (tmp_path / "a.jpg").write_bytes(b"\xff")
    code, lines = _run("add", str(tmp_path / "a.jpg"), str(tmp_path / "missing.md"))
    assert code == 1 and "1 unsupported" in lines[-1] and "1 unreadable" in lines[-1]
    code, lines = _run("list")
    assert code == 0 and lines == [lines[0]] and "is empty: deep-research library add" in lines[0]
