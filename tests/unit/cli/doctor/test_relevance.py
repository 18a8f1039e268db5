"""`cli.doctor.relevance`: where the model's files are said to be, and `doctor --fetch`.

The files' own sources are tested in tests/unit/embedding/test_files.py; here the check's
lines for each case, in this process, with the real model where it loads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.cli.doctor import relevance
from deep_research.config.settings import load_context
from deep_research.embedding import files, loader


async def test_the_installed_model_is_named_checked_and_loaded() -> None:
    found = files.locate()
    assert found is not None, f"install the model's files first: {files.OFFLINE_LINE}"
    check = await relevance.check_relevance(load_context({}), 60.0)
    assert check.status == "ok", check
    assert found.describe() in check.detail and "SHA-256 checked" in check.detail
    assert "384-dimensional" in check.detail


async def test_not_yet_downloaded_is_a_warning_with_both_ways_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(files, "locate", lambda: None)
    monkeypatch.setattr(files, "offline", lambda: False)
    check = await relevance.check_relevance(load_context({}), 5.0)
    assert check.status == "warn" and "not yet downloaded" in check.detail
    assert "deep-research doctor --fetch" in check.fix and files.OFFLINE_LINE in check.fix


async def test_offline_without_the_model_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "locate", lambda: None)
    monkeypatch.setattr(files, "offline", lambda: True)
    check = await relevance.check_relevance(load_context({}), 5.0)
    assert check.status == "fail" and "HF_HUB_OFFLINE" in check.detail
    assert check.fix == f"install it: {files.OFFLINE_LINE}"
    off = await relevance.check_relevance(load_context({"relevance_filter": False}), 5.0)
    assert off.status == "ok" and "not needed (relevance_filter=false)" in off.detail


async def test_damaged_files_fail_with_the_checks_own_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setattr(files, "locate", lambda: files.Weights(tmp_path, "cache"))
    monkeypatch.setattr(loader, "_weights", None)  # this process checks again
    check = await relevance.check_relevance(load_context({}), 5.0)
    assert check.status == "fail" and "config.json" in check.detail
    assert "deep-research doctor --fetch" in check.detail


def test_fetch_with_the_package_installed_downloads_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    found = files.locate()
    assert found is not None
    monkeypatch.setattr(files, "locate", lambda: files.Weights(found.folder, "package"))
    monkeypatch.setattr(files, "fetch", lambda **_: pytest.fail("nothing to download"))
    assert relevance.fetch() is True
    assert "nothing to download" in capsys.readouterr().err


def test_a_failed_fetch_is_one_line_and_false(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def down(**_: object) -> files.Weights:
        raise files.WeightsUnavailable("Could not download: refused.")

    monkeypatch.setattr(files, "locate", lambda: None)
    monkeypatch.setattr(files, "fetch", down)
    assert relevance.fetch() is False
    assert capsys.readouterr().err == "relevance model: Could not download: refused.\n"
