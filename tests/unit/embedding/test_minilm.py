"""Our MiniLM gives sentence-transformers' vectors for the same model files.

The reference is sentence-transformers' output, saved once with the script that made it
(tests/support/minilm_reference/), for the same texts: short and long (past the 256-token
window), empty, markup, control characters, scripts other than Latin, and more texts than
one batch holds. No install needs torch to run it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from deep_research.embedding.encoder import CHARS_PER_TOKEN
from deep_research.embedding.minilm import MiniLM
from deep_research.embedding.weights import mapped_tensors
from tests.support import minilm_reference
from tests.support.minilm_reference import FOLDER, PAGE, TEXTS


def test_the_reference_was_made_from_these_texts() -> None:
    assert minilm_reference.facts()["texts_sha256"] == minilm_reference.texts_digest()


def test_the_vectors_are_sentence_transformers_vectors(ours: MiniLM) -> None:
    got = np.asarray(ours.embed_documents(TEXTS))
    want = minilm_reference.vectors()
    assert got.shape == want.shape == (len(TEXTS), 384)
    assert np.abs(got - want).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_a_text_gets_the_same_vector_alone_and_in_a_batch(ours: MiniLM) -> None:
    alone = np.asarray(ours.embed_query(TEXTS[0]))
    batched = np.asarray(ours.embed_documents(TEXTS)[0])
    assert np.abs(alone - batched).max() < 1e-5  # padding never leaks into a shorter text


def test_tokens_are_counted_as_the_reference_tokenizer_counts(ours: MiniLM) -> None:
    facts = minilm_reference.facts()
    for index, want in facts["token_counts"].items():
        assert ours.token_count(TEXTS[int(index)]) == want
    assert ours.window == facts["window"] == 256


def test_no_texts_no_vectors(ours: MiniLM) -> None:
    assert ours.embed_documents([]) == []


def test_a_folder_of_another_architecture_is_refused(tmp_path: Path) -> None:
    for name in ("config.json", "sentence_bert_config.json", "tokenizer.json", "model.safetensors"):
        (tmp_path / name).write_bytes((FOLDER / name).read_bytes())
    config = (FOLDER / "config.json").read_text().replace('"gelu"', '"relu"')
    (tmp_path / "config.json").write_text(config)
    with pytest.raises(ValueError, match="not a BERT encoder"):
        MiniLM(tmp_path)


def _count_computed(model: MiniLM, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """From now on, the texts of each forward pass `model` runs (not cache hits)."""
    computed: list[list[str]] = []
    real = model._compute

    def counting(texts: list[str]) -> object:
        computed.append(list(texts))
        return real(texts)

    monkeypatch.setattr(model, "_compute", counting)
    return computed


def test_a_text_embedded_again_comes_from_the_cache(
    ours: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ours.embed_documents(["cached once", "cached twice"])
    computed = _count_computed(ours, monkeypatch)
    again = ours.embed_documents(["cached twice", "new text", "cached once", "new text"])
    assert computed == [["new text"]], "only the unseen text, once"
    assert again[0] == first[1] and again[2] == first[0] and again[1] == again[3]


def test_the_cache_keeps_a_bounded_number_of_vectors(
    ours: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("deep_research.embedding.minilm.CACHED", 3)
    ours.embed_documents([f"bounded {i}" for i in range(5)])
    assert len(ours._cache) == 3


def test_a_huge_text_is_embedded_as_its_first_window(ours: MiniLM) -> None:
    huge = PAGE * 200  # 1.4 M characters: read up to the window, never tokenized whole
    got = np.asarray(ours.embed_query(huge))
    want = minilm_reference.vectors()[TEXTS.index(PAGE)]
    assert np.abs(got - want).max() < 1e-5  # the window's tokens are PAGE's first 254


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[:4],  # shorter than the header length
        lambda raw: (10**9).to_bytes(8, "little") + raw[8:],  # a header past the end
        lambda raw: raw[: len(raw) // 2],  # tensors cut off
    ],
)
def test_a_damaged_weights_file_is_refused(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    for name in ("config.json", "sentence_bert_config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((FOLDER / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(
        damage((FOLDER / "model.safetensors").read_bytes())
    )
    with pytest.raises(ValueError, match="safetensors|outside the file"):
        MiniLM(tmp_path)


def test_one_thread_computes_and_merges_the_requests_that_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = MiniLM(FOLDER)  # its own thread and queue: the requests below are the only ones
    busy, release = threading.Event(), threading.Event()
    passes: list[tuple[str, list[str]]] = []
    real = model._compute

    def gated(texts: list[str]) -> object:
        passes.append((threading.current_thread().name, list(texts)))
        if len(passes) == 1:
            busy.set()
            release.wait(10)
        return real(texts)

    monkeypatch.setattr(model, "_compute", gated)
    first = model.submit(["first request"])
    assert busy.wait(10)
    waiting = [model.submit([f"waiting {i}", "shared text"]) for i in range(3)]
    release.set()
    assert len(first.result(10)[0]) == 384
    results = [future.result(10) for future in waiting]
    assert [name for name, _ in passes] == ["minilm", "minilm"]
    assert passes[1][1] == ["waiting 0", "shared text", "waiting 1", "waiting 2"], (
        "the three waiting requests in one pass, the text they share computed once"
    )
    assert results[0][1] == results[2][1]


def test_a_cache_hit_keeps_a_text_among_the_recent(
    ours: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ours, "_cache", type(ours._cache)())
    monkeypatch.setattr("deep_research.embedding.minilm.CACHED", 2)
    ours.embed_documents(["recent a", "recent b"])
    ours.embed_documents(["recent a"])  # answered from the cache: now the most recent
    ours.embed_documents(["recent c"])
    computed = _count_computed(ours, monkeypatch)
    ours.embed_documents(["recent a"])
    assert computed == [], "the text used last is kept, the one used least lately goes"


def test_the_cache_holds_vectors_not_the_texts_or_the_passes_arrays(
    ours: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ours, "_cache", type(ours._cache)())
    monkeypatch.setattr("deep_research.embedding.minilm.CACHED", 4)
    huge = [f"{i} " + "heat pumps " * 100_000 for i in range(2)]  # 1.1 M characters each
    ours.embed_documents([*(f"short {i}" for i in range(300)), *huge])  # the last 4 kept
    held = sum(sys.getsizeof(key) for key in ours._cache)
    for vector in ours._cache.values():
        held += (vector if vector.base is None else vector.base).nbytes
    assert held < 4 * 10_000, f"{held:,} bytes kept for 4 vectors"
    again = ours.embed_documents([huge[0][: ours.window * CHARS_PER_TOKEN] + " more"])
    assert np.abs(np.asarray(again[0]) - np.asarray(ours.embed_query(huge[0]))).max() < 1e-6


@pytest.mark.parametrize(
    "header",
    [
        b"[]",  # not an object
        b'{"w": 1}',  # an entry that is not an object
        b'{"w": {"dtype": "F32", "shape": [1]}}',  # no offsets
        b'{"w": {"dtype": "F32", "shape": 4, "data_offsets": [0, 4]}}',  # not a list
        b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": ["0", 4]}}',  # text offsets
        b'{"w": {"dtype": "F32", "shape": [-1, -1], "data_offsets": [0, 4]}}',
        b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}}',
    ],
)
def test_a_malformed_weights_header_is_refused_as_a_value_error(
    tmp_path: Path, header: bytes
) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + bytes(16))
    with pytest.raises(ValueError, match="safetensors|outside the file"):
        mapped_tensors(path)
