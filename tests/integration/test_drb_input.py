"""Hostile query and output files for the DeepResearch Bench export: clear errors, no runs.

The model server address is a closed port: a test that reached a run would fail with a
connection error instead of the input error it expects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.drb import main
from tests.support.fakes.http_server import closed_port


@pytest.fixture(autouse=True)
def no_model_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")


GOOD = '{"id": 1, "prompt": "q"}\n'


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (GOOD + '{"id": 2, "prompt": "q"\n', ":2: not JSON ("),
        (GOOD + "[1, 2]\n", ':2: needs an object {"id": ..., "prompt": "..."}'),
        (GOOD + '{"prompt": "q"}\n', ":2: needs an 'id' (a number or a string)"),
        ('{"id": true, "prompt": "q"}\n', ":1: needs an 'id'"),
        ('{"id": [1], "prompt": "q"}\n', ":1: needs an 'id'"),
        ('{"id": 1}\n', ":1: needs a non-empty 'prompt' string"),
        ('{"id": 1, "prompt": "  \\n "}\n', ":1: needs a non-empty 'prompt' string"),
        ('{"id": 1, "prompt": 5}\n', ":1: needs a non-empty 'prompt' string"),
        (GOOD + "\n" + GOOD, ":3: id 1 repeats line 1"),
        ("[" * 100_000 + "\n", ":1: not JSON ("),
        ('{"id": ' + "1" * 5000 + ', "prompt": "q"}\n', ":1: not JSON (a number too long"),
        ("\n  \n", "no queries"),
    ],
)
def test_bad_query_lines_are_named_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    queries = tmp_path / "query.jsonl"
    queries.write_text(content, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["--queries", str(queries), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {queries}") and expected in err, err
    assert not out.exists()


def test_ids_one_and_quoted_one_are_different_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "query.jsonl"
    queries.write_text(GOOD + '{"id": "1", "prompt": "q"}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text(
        '{"id": 1, "prompt": "q", "article": "a"}\n{"id": "1", "prompt": "q", "article": "b"}\n'
    )
    assert main(["--queries", str(queries), "--out", str(out)]) == 0
    assert "2 of 2 already in" in capsys.readouterr().err


def test_unreadable_files_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "query.jsonl"
    queries.write_bytes(b'{"id": 1, "prompt": "\xff"}\n')
    assert main(["--queries", str(queries), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert f"error: {queries}: cannot read" in capsys.readouterr().err
    missing = tmp_path / "missing.jsonl"
    assert main(["--queries", str(missing), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert f"error: {missing}: cannot read" in capsys.readouterr().err


def test_a_broken_line_inside_the_output_file_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "query.jsonl"
    queries.write_text(GOOD, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    for broken in ("not json", "[" * 100_000, '{"id": ' + "1" * 5000 + "}"):
        before = broken + '\n{"id": 1, "prompt": "q", "article": "a"}\n'
        out.write_text(before, encoding="utf-8")
        assert main(["--queries", str(queries), "--out", str(out)]) == 2
        assert f"error: {out}:1: not an exported line" in capsys.readouterr().err
        assert out.read_text(encoding="utf-8") == before


def test_a_model_server_that_is_down_stops_the_export_resumably(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "query.jsonl"
    queries.write_text(GOOD, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["--queries", str(queries), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Cannot reach the model server" in err and "Run the same command again" in err
    assert not out.exists() or out.read_text() == ""
