"""The sentence-embedding model under relevance scoring, memory and the library.

`embedder()` gives the process's MiniLM (loaded on first use; numpy and onnxruntime, no
deep-learning framework), `warm_up()` loads it on a daemon thread when a run starts.

onnxruntime (1.29 and later, its official builds) writes a device id and a process event
(the interpreter's path, the OS) under ~/.cache/Microsoft/DeveloperTools as it is imported,
to upload them to Microsoft. `ORT_DISABLE_TELEMETRY=1` before that import is its whole
opt-out: set here, as the package is imported (before any thread of ours reads the
environment), unless a user gave it a value (an empty one, as a `.env` line left blank
writes, turns telemetry on in onnxruntime: it counts as unset here). A host that imported
onnxruntime before deep_research keeps its telemetry as it was.
"""

import os

if not os.environ.get("ORT_DISABLE_TELEMETRY"):
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"

from deep_research.embedding.loader import embedder, warm_up

__all__ = ["embedder", "warm_up"]
