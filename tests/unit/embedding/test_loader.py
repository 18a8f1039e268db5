"""The process's one model: loaded once on first use, warmed up on one background thread."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from deep_research.embedding import files, loader, minilm

real_minilm = minilm.MiniLM


class Model:
    made: list[Path] = []
    gate = threading.Event()  # a load waits here: a test can call again while it runs

    def __init__(self, folder: Path, check: object = None) -> None:
        assert Model.gate.wait(timeout=5) and callable(check), "the files are checked as read"
        Model.made.append(folder)
        self.embedded = threading.Event()

    def embed_query(self, text: str) -> list[float]:
        self.embedded.set()
        return [0.0]


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    Model.made = []
    Model.gate.set()
    monkeypatch.setattr(minilm, "MiniLM", Model)
    monkeypatch.setattr(loader, "_model", None)
    monkeypatch.setattr(loader, "_warming", None)
    monkeypatch.setattr(loader, "_weights", None)


def test_the_model_is_loaded_once_on_first_use_and_never_before() -> None:
    assert loader.loaded() is None and Model.made == []
    first = loader.embedder()
    assert loader.embedder() is first and loader.loaded() is first
    [folder] = Model.made
    assert (Path(folder) / "model.safetensors").exists()


def test_warm_up_loads_on_one_daemon_thread_and_embeds_once() -> None:
    Model.gate.clear()
    loader.warm_up()
    warming = loader._warming
    assert warming is not None and warming.daemon
    loader.warm_up()  # a second call while the first loads starts nothing
    assert loader._warming is warming
    Model.gate.set()
    warming.join(timeout=5)
    model = loader.loaded()
    assert isinstance(model, Model) and model.embedded.is_set() and len(Model.made) == 1


def test_warm_up_does_nothing_once_the_model_is_loaded() -> None:
    loader.embedder()
    loader.warm_up()
    assert loader._warming is None


def test_a_failed_warm_up_is_silent_and_the_first_use_raises_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(folder: Path, check: object) -> None:
        raise OSError("weights missing")

    monkeypatch.setattr(minilm, "MiniLM", broken)
    loader.warm_up()
    assert loader._warming is not None
    loader._warming.join(timeout=5)
    assert loader.loaded() is None
    with pytest.raises(OSError, match="weights missing"):
        loader.embedder()


def test_the_load_checks_the_bytes_it_uses_not_a_copy_checked_earlier(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file replaced after the run's check (a reinstall, a re-download) is refused at load."""
    found = files.locate()
    assert found is not None
    for name in files.SHA256:
        (tmp_path / name).symlink_to(found.folder / name)
    monkeypatch.setattr(files, "locate", lambda: files.Weights(tmp_path, "cache"))
    monkeypatch.setattr(minilm, "MiniLM", real_minilm)
    assert loader.weights().folder == tmp_path  # checked: the real files
    (tmp_path / "config.json").unlink()
    config = json.loads((found.folder / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 0.5}))
    with pytest.raises(files.WeightsUnavailable, match="config.json has SHA-256"):
        loader.embedder()
    assert loader.loaded() is None
