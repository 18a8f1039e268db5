"""`deep-research doctor`'s checks of this machine's own setup: tracing and directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.cli.doctor.local import check_tracing, check_writable


@pytest.fixture
def tracing_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("LANGCHAIN_TRACING", raising=False)
    return monkeypatch


def test_tracing_on_without_a_langsmith_key_warns_naming_the_variables(
    tracing_env: pytest.MonkeyPatch,
) -> None:
    assert check_tracing().detail == "LangSmith tracing is off"
    tracing_env.setenv("LANGCHAIN_TRACING_V2", "true")
    check = check_tracing()
    assert check.status == "warn"
    assert "LANGCHAIN_TRACING_V2=true" in check.detail and "LANGSMITH_API_KEY" in check.detail
    tracing_env.setenv("LANGCHAIN_API_KEY", "lsv2_pt_SECRET0123456789")
    check = check_tracing()
    assert check.status == "ok" and "SECRET" not in check.detail


def test_a_file_in_place_of_a_directory_is_not_writable(tmp_path: Path) -> None:
    blocked = tmp_path / "reports"
    blocked.write_text("not a directory")
    check = check_writable(blocked, "report dir")
    assert check.status == "fail"
    assert check.detail == f"{blocked} is a file, not a directory"


def test_directories_are_tested_by_writing_and_left_as_they_were(tmp_path: Path) -> None:
    existing = tmp_path / ".deep_research"
    existing.mkdir()
    assert check_writable(existing, "checkpoint dir").detail == f"{existing}/ is writable"
    absent = check_writable(tmp_path / "reports", "report dir")
    assert absent.status == "ok" and "will be created on the first run" in absent.detail
    assert sorted(p.name for p in tmp_path.iterdir()) == [".deep_research"]
    assert list(existing.iterdir()) == []


@pytest.mark.parametrize(
    ("environ", "status", "says"),
    [
        ({"LANGSMITH_TRACING": "True"}, "ok", "off"),  # only exactly "true" traces
        ({"LANGSMITH_TRACING_V2": "false", "LANGSMITH_TRACING": "true"}, "ok", "off"),
        ({"LANGSMITH_TRACING_V2": " ", "LANGSMITH_TRACING": "true"}, "warn", "LANGSMITH_TRACING="),
        ({"LANGCHAIN_TRACING": "true", "LANGSMITH_API_KEY": "k"}, "ok", "with a key"),
    ],
)
def test_tracing_reads_the_first_variable_set_as_langsmith_does(
    environ: dict[str, str], status: str, says: str
) -> None:
    check = check_tracing(environ)
    assert check.status == status and says in check.detail
