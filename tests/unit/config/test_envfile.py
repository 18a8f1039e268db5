"""`config.envfile`: which `.env` values are set, once per process, and where each came from.

The end-to-end precedence (run > environment > `.env` > default) and the warnings on bad
files are tested through the CLI in tests/integration/test_dotenv.py; these call the
functions directly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deep_research.config import envfile


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """`.env` switched on and not yet loaded, in an empty directory that is the cwd."""
    monkeypatch.delenv(envfile.OPT_OUT)
    monkeypatch.setattr(envfile, "_loaded", False)
    monkeypatch.setattr(envfile, "_origin", {})
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("value", "off"), [("0", True), (" No ", True), ("1", False), ("", False)])
def test_disabled_reads_the_opt_out(value: str, off: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(envfile.OPT_OUT, value)
    assert envfile.disabled() is off


def test_load_sets_only_what_is_missing_and_not_empty(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text('A=from-file\nB=\nC="quoted value"\nD=kept-out\n')
    environ = {"D": "already"}
    assert envfile.load(path, environ) == ["A", "C"]
    assert environ == {"D": "already", "A": "from-file", "C": "quoted value"}


def test_a_missing_file_is_no_variable(tmp_path: Path) -> None:
    assert envfile.load(tmp_path / "absent.env", {}) == []


def test_load_once_reads_the_file_once_and_says_where_each_value_came_from(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DR_TEST_VALUE", raising=False)
    (fresh / ".env").write_text("DR_TEST_VALUE=one\n")
    try:
        assert envfile.load_once() == fresh / ".env"
        assert os.environ["DR_TEST_VALUE"] == "one"
        assert envfile.source_of("DR_TEST_VALUE") == f"DR_TEST_VALUE in {fresh / '.env'}"
        assert envfile.load_once() is None, "a second call reads nothing"
        monkeypatch.setenv("DR_TEST_VALUE", "two")
        assert envfile.source_of("DR_TEST_VALUE") == "environment variable DR_TEST_VALUE"
    finally:
        os.environ.pop("DR_TEST_VALUE", None)


def test_without_a_file_load_once_finds_nothing(fresh: Path) -> None:
    assert envfile.load_once() is None and not envfile._origin


def test_a_variable_never_in_a_file_is_named_as_the_environments(fresh: Path) -> None:
    assert envfile.source_of("LLM_TIMEOUT") == "environment variable LLM_TIMEOUT"
