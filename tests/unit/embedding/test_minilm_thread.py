"""The MiniLM's thread: a failure reaches its caller and the thread goes on, requests
made on the thread itself, background requests, a forked child, and BLAS held to the
model's thread (the `ours` fixture is in conftest.py)."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from deep_research.embedding.encoder import EncoderError
from deep_research.embedding.minilm import BLAS_THREAD_VARIABLES as MINILM_BLAS_VARIABLES
from deep_research.embedding.minilm import MiniLM
from tests.support.minilm_reference import FOLDER


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
    # Never resolved, a caller would wait for ever. Out of memory is the model's failure
    # (a ValueError): scoring goes on unfiltered, memory is left out, the run goes on.
    with pytest.raises(EncoderError, match="out of memory in a pass over 1 texts") as caught:
        model.submit(["first"]).result(30)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value.__cause__, MemoryError)
    assert len(model.submit(["second"]).result(30)[0]) == 384


def test_a_failed_pass_s_arrays_are_freed_once_its_callers_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The error's cause carries the pass's frames and arrays: the thread, idle again, keeps
    none of them (no request, future or error left bound while it waits)."""
    model = MiniLM(FOLDER)
    arrays: list[weakref.ref[np.ndarray]] = []

    def out_of_memory(texts: list[str]) -> Any:
        held = np.ones(1_000_000, np.float64)  # 8 MB, alive in this frame
        arrays.append(weakref.ref(held))
        raise MemoryError("out of memory after the first arrays")

    monkeypatch.setattr(model, "_compute", out_of_memory)

    def ask() -> None:
        with pytest.raises(EncoderError):
            model.submit(["first"]).result(30)

    ask()  # the caller's future, error and traceback go with this frame
    deadline = time.monotonic() + 10
    while arrays[0]() is not None and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert arrays[0]() is None, "the idle thread still holds the failed pass's arrays"


def test_a_failure_other_than_memory_reaches_the_caller_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = MiniLM(FOLDER)

    def broken(texts: list[str]) -> Any:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(model, "_compute", broken)
    with pytest.raises(RuntimeError, match="a bug of ours"):
        model.submit(["first"]).result(30)


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


def test_a_pass_ended_by_what_is_not_an_exception_reaches_the_caller_as_the_model_s_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A library calling sys.exit() in a pass: handed on as it is, it would end the caller's
    event loop (asyncio re-raises a SystemExit even under `return_exceptions`); as the
    model's failure, scoring goes on unfiltered. The thread goes on."""
    model = MiniLM(FOLDER)
    real = model._compute
    calls = 0

    def exits_once(texts: list[str]) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise SystemExit(3)
        return real(texts)

    monkeypatch.setattr(model, "_compute", exits_once)
    with pytest.raises(EncoderError, match="the model's pass stopped") as caught:
        model.submit(["first"]).result(30)
    assert isinstance(caught.value.__cause__, SystemExit)
    assert len(model.submit(["second"]).result(30)[0]) == 384


def test_a_batch_that_fails_before_its_pass_is_answered_not_raised_on_the_thread() -> None:
    """Gathering a batch's texts can run out of memory too: its callers get the error, and
    the thread, which would otherwise end with them waiting, goes on."""
    from concurrent.futures import Future

    class NoRoom(list[str]):
        def __iter__(self) -> Any:
            raise MemoryError("no room to gather the texts")

    model = MiniLM(FOLDER)
    future: Future[list[list[float]]] = Future()
    model._answer([(NoRoom(["a"]), future, False)])  # returns: the thread would go on
    with pytest.raises(EncoderError, match="out of memory"):
        future.result(0)
