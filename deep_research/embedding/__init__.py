"""The sentence-embedding model under relevance scoring, memory and the library.

`embedder()` gives the process's MiniLM (loaded on first use, no deep-learning framework),
`warm_up()` loads it on a daemon thread when a run starts.
"""

from deep_research.embedding.loader import embedder, warm_up

__all__ = ["embedder", "warm_up"]
