"""Downloads of MiniLM's files, each in a fresh interpreter (huggingface_hub reads HF_HOME,
HF_ENDPOINT and HF_HUB_OFFLINE at import) against `FakeHub`, which serves the real weights
as the hub lays them out: a download, a resume, a short one, other bytes, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deep_research.embedding import files
from tests.support.cli import REPO
from tests.support.fakes.hub_server import FakeHub

NAMES = list(files.SHA256)

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


def _fetch(
    home: Path,
    endpoint: str,
    *,
    offline: bool = False,
    repair: bool = False,
    extra: dict[str, str] | None = None,
) -> Any:
    env = {
        **(extra or {}),
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
@pytest.mark.parametrize("extra", [{"HF_TOKEN": "hf_envToken0123456789"}, {}])
def test_a_download_sends_no_hugging_face_token(
    extra: dict[str, str], hub: FakeHub, tmp_path: Path
) -> None:
    """The model is public: neither HF_TOKEN nor a stored login's token goes to HF_ENDPOINT,
    which a project's `.env` may have set (config/endpoint_keys.py)."""
    (tmp_path / "token").write_text("hf_storedLoginToken0123456789")  # $HF_HOME/token
    result, _ = _fetch(tmp_path, hub.url, extra=extra)
    assert result.get("source") == "cache", result
    assert hub.requests() and hub.authorization == []


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
