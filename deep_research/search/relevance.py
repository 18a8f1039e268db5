"""One relevance scale for every provider: MiniLM cosine similarity of query and result.

Providers score differently (Tavily on 0-1 by its own model, SearXNG unbounded, ddgs not at
all), so their scores are not used: `relevance_threshold` always means the cosine
similarity of all-MiniLM-L6-v2 embeddings of the query and of the result's title + snippet,
with negatives counted as 0. The model reads only the first 256 tokens of a text, which is
why whole pages are never embedded. A model that cannot compute (onnxruntime or tokenizers
that does not import, a session it cannot make, a pass it fails or has no memory for)
leaves a search's results unfiltered, in the provider's order, as `relevance_filter=false`
does, and says so (`relevance_off`). Files that can be neither found nor downloaded still
fail the search with what to do: each search would try the download again (the CLI checks
them first).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from deep_research.embedding import loader
from deep_research.embedding.encoder import EncoderError
from deep_research.embedding.native import ProcessExiting
from deep_research.runtime import progress
from deep_research.search.types import SearchResult
from deep_research.text import secrets
from deep_research.text.wording import one_line

REASON_CHARS = 400  # of the model's error in the event (its fix ends it: encoder.CAUSE_CHARS)


def scored_text(result: SearchResult) -> str:
    return f"{result.title}\n{result.content}"


async def score_results(query: str, results: Sequence[SearchResult]) -> list[float]:
    """Relevance of each result to `query`, computed on the model's thread (in one pass
    with other researchers' queries waiting there) while the event loop goes on."""
    if not results:
        return []
    # A load under way is waited for off the loop.
    model = loader.loaded()
    if model is None:
        # Scoring is what relevance_filter asks for: the model may be fetched for it.
        model = await asyncio.to_thread(lambda: loader.embedder(download=True))
    texts = [query, *(scored_text(r) for r in results)]
    return _similarities(await asyncio.wrap_future(model.submit(texts)))


async def scores_or_kept(query: str, results: Sequence[SearchResult], owner: str) -> list[float]:
    """`score_results`, or every result kept (1.0 each: the provider's order) when the model
    cannot compute, said in a `relevance_off` event for researcher `owner`."""
    try:
        return await score_results(query, results)
    except (EncoderError, ProcessExiting) as error:
        reason = one_line(secrets.redact(str(error)), REASON_CHARS)  # redacted before the cut
        progress.emit("relevance_off", id=owner, reason=reason)
        return [1.0] * len(results)


def _similarities(vectors: list[list[float]]) -> list[float]:
    array = np.asarray(vectors, dtype=np.float32)
    similarities = array[1:] @ array[0]  # the vectors are unit length
    return [round(float(max(0.0, s)), 3) for s in similarities]
