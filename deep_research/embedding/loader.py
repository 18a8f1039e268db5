"""The process's one MiniLM model: loaded on first use or warmed up when a run starts.

Relevance scoring, the memory store and the library all embed with it, so it lives below
them. The weights are memory-mapped once and read-only afterwards; the model's own thread
and cache are shared the same way (see `runtime/process.py` for what else lives as long as
the process).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from deep_research.embedding import files

if TYPE_CHECKING:
    from deep_research.embedding.minilm import MiniLM

_weights: files.Weights | None = None
_weights_lock = threading.Lock()
_model: MiniLM | None = None
_model_lock = threading.Lock()
_warming: threading.Thread | None = None
_warming_lock = threading.Lock()


def weights(say: Callable[[str], None] | None = None, *, download: bool = False) -> files.Weights:
    """The model's files, found (or, if `download`, downloaded: `say` announces it) and
    checked once per process; WeightsUnavailable says what to do when none will do. The
    CLI asks before a run's first model call, so a missing model stops it there; memory
    asks without `download`, so a run without relevance filtering never fetches 91 MB."""
    global _weights
    with _weights_lock:
        if _weights is None:
            _weights = files.ensure(say, download=download)
        return _weights


def embedder(*, download: bool = False) -> MiniLM:
    """The process-wide MiniLM model, loaded on first use (a fraction of a second: numpy
    and onnxruntime, no deep-learning framework), never at import. Each file is checked
    against its pinned SHA-256 as it is read for the load (`files.verify`)."""
    global _model
    with _model_lock:
        if _model is None:
            from deep_research.embedding.minilm import MiniLM

            found = weights(download=download)
            _model = MiniLM(found.folder, lambda name, digest: files.verify(found, name, digest))
        return _model


def warm_up(*, download: bool = False, after: Callable[[], None] | None = None) -> None:
    """Load the model on a background thread, so the first search need not wait.

    Called when a run starts: the load (a fraction of a second: onnxruntime's session) and one small
    pass, which pages them in and starts the model's thread, overlap the clarifier's and
    the planner's model calls. A daemon thread, not the event loop's executor: `asyncio.run`
    and the CLI's Ctrl-C exit never wait for it (a normal exit waits for onnxruntime's
    session being made, if it is: embedding.native), and it holds no executor worker that a
    page extraction needs. A second call returns at once (it never waits on the model's
    lock). A failed load is silent here and raises again at first use. `after`, when
    given, is waited for on the thread before the load (the run's first model request).
    """
    global _warming
    with _warming_lock:
        if _warming is not None or _model is not None:
            return
        _warming = threading.Thread(
            target=_load_quietly,
            args=(download, after),
            name="relevance-warm-up",
            daemon=True,
        )
    _warming.start()


def _load_quietly(download: bool, after: Callable[[], None] | None) -> None:
    if after is not None:
        after()
    try:
        embedder(download=download).embed_query("warm up")
    except Exception:  # noqa: S110  # the first use loads again and reports it
        pass


def loaded() -> MiniLM | None:
    """The model if it is loaded already (no lock, no wait), else None."""
    return _model
