"""all-MiniLM-L6-v2 as the process uses it: one thread computes, recent vectors are kept.

`embedding.encoder` is the forward pass; this module decides who computes when (one
worker thread that merges the requests waiting, background ones last, and cuts a pass of
many texts into one part a core: `embedding.parts`) and keeps the vectors of recent texts,
so a text embedded twice is computed once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from deep_research.embedding import parts
from deep_research.embedding.encoder import BATCH, Check, Encoder, EncoderError
from deep_research.embedding.weights import FloatArray

log = logging.getLogger(__name__)

CACHED = 4096  # vectors (1.5 KB each) kept for texts embedded lately
MAX_BATCHED_TEXTS = 256  # texts one pass of the model's thread takes from the queue
# (texts, future, background): background requests wait while any other does.
_Request = tuple[list[str], "Future[list[list[float]]]", bool]


class MiniLM(Embeddings):
    """Sentence embeddings from a sentence-transformers model folder, for every caller."""

    def __init__(self, folder: Path, check: Check | None = None) -> None:
        self.encoder = Encoder(folder, check)
        # Recent texts' vectors: a page prepared for memory while the report is written
        # (`nodes.remember`), a query asked twice, the same snippet in two searches.
        # Keyed by a digest of the text, so that the cache holds 4096 small vectors,
        # never the (possibly huge) texts themselves.
        self._cache: OrderedDict[bytes, FloatArray] = OrderedDict()
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._worker_pid = 0  # the process whose thread computes; none yet
        # Each part thread holds BLAS to one thread too (numpy's few products beside the
        # layers, which onnxruntime computes on the calling thread alone).
        self._part_threads = parts.PartThreads(_one_blas_thread)
        # A child forked while a thread of the parent held the lock would wait for it for
        # ever: the child gets a lock of its own (the cache is a copy, still right).
        reference = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _renew_lock(reference))

    @property
    def window(self) -> int:
        """The tokens of a text the model reads, [CLS] and [SEP] included."""
        return self.encoder.window

    def token_count(self, text: str) -> int:
        """How many tokens `text` is, without [CLS] and [SEP]."""
        return self.encoder.token_count(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors of `texts` (blocking); recent texts come from the cache."""
        if threading.current_thread() is self._worker:  # waiting on its own queue: never
            vectors = self._vectors(list(texts))
            return [vectors[text].tolist() for text in texts]
        return self.submit(texts).result()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def submit(
        self, texts: Sequence[str], *, background: bool = False
    ) -> Future[list[list[float]]]:
        """The vectors of `texts`, computed by the model's own thread.

        One thread computes for every caller in the process (relevance scoring, memory,
        the library), each pass taking every request waiting: one pass over 40 short texts
        costs far less than eight passes over five, and callers on several threads never
        compute at once (threads a core each would spin against each other on a busy
        machine); a pass is cut into parts only here, one a core, each part computed on one
        thread. A request made while the thread is idle is computed at once.

        A `background` request (memory preparing pages no one waits for) is computed only
        when no other request waits, and never in the same pass as one: a search's scoring
        waits for at most the background pass under way, so such requests should be small.
        """
        future: Future[list[list[float]]] = Future()
        with self._lock:
            known = self._cached([_key(text) for text in texts])
            if all(vector is not None for vector in known):
                future.set_result([vector.tolist() for vector in known if vector is not None])
                return future
            if self._worker_pid != os.getpid():  # first use, or a forked child (no thread)
                self._requests = queue.SimpleQueue()
                self._worker = None
                self._worker_pid = os.getpid()
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(
                    target=self._serve, args=(self._requests,), name="minilm", daemon=True
                )
                self._worker.start()
            self._requests.put((list(texts), future, background))
        return future

    def _serve(self, requests: queue.SimpleQueue[_Request]) -> None:
        # A thread that ended here would leave every caller waiting: asking BLAS may fail
        # any way a third-party library can, and then BLAS keeps its own threads.
        try:
            _one_blas_thread()
        except Exception:  # noqa: BLE001
            log.warning("BLAS threads left as they are", exc_info=True)
        later: deque[_Request] = deque()  # background requests, taken when none else waits
        while True:
            # Each in a method of its own: no request, future or failed pass's error (its
            # traceback holds the pass's arrays) stays bound while the thread waits.
            self._answer(self._next(requests, later))

    @staticmethod
    def _next(requests: queue.SimpleQueue[_Request], later: deque[_Request]) -> list[_Request]:
        """The requests of the next pass: every one waiting that is not `background`, up to
        MAX_BATCHED_TEXTS texts (waiting for one when none is); else the oldest background
        one. Background requests taken meanwhile join `later`."""
        waiting: list[_Request] = []
        count = 0
        block = not later
        while count < MAX_BATCHED_TEXTS:
            try:
                request = requests.get(block=block)
            except queue.Empty:
                break
            block = False
            if request[2]:
                later.append(request)
            else:
                waiting.append(request)
                count += len(request[0])
        return waiting or [later.popleft()]

    def _answer(self, waiting: list[_Request]) -> None:
        """One pass over the texts of `waiting`, each caller given its vectors or the error."""
        # A caller that gave up (its task was cancelled) is skipped, not answered.
        batch = [(texts, f) for texts, f, _ in waiting if f.set_running_or_notify_cancel()]
        # Everything that can fail (the lists too: memory) before any caller is
        # answered, so a failure reaches every caller and never ends the thread.
        try:
            vectors = self._vectors([text for texts, _ in batch for text in texts])
            answers = [[vectors[text].tolist() for text in texts] for texts, _ in batch]
        except BaseException as error:  # noqa: BLE001  # every waiting caller gets it
            reported = _as_reported(error, sum(len(texts) for texts, _ in batch))
            for _, future in batch:
                future.set_exception(reported)
            return
        for (_, future), answer in zip(batch, answers, strict=True):
            future.set_result(answer)

    def _cached(self, keys: Sequence[bytes]) -> list[FloatArray | None]:
        """The cached vector of each key, or None; called with `_lock` held."""
        known = [self._cache.get(key) for key in keys]
        for key, vector in zip(keys, known, strict=True):
            if vector is not None:
                self._cache.move_to_end(key)  # a hit is a use: least recently used goes
        return known

    def _vectors(self, texts: list[str]) -> dict[str, FloatArray]:
        keys = {text: _key(text) for text in texts}
        with self._lock:
            cached = self._cached(list(keys.values()))
        known = {
            text: vector for text, vector in zip(keys, cached, strict=True) if vector is not None
        }
        missing = [text for text in keys if text not in known]
        if missing:
            computed = self._compute(missing)
            with self._lock:
                for text, vector in zip(missing, computed, strict=True):
                    # A copy: a row of the pass's array would keep the whole array alive.
                    known[text] = self._cache[keys[text]] = vector.copy()
                while len(self._cache) > CACHED:
                    self._cache.popitem(last=False)
        return known

    def _compute(self, texts: list[str]) -> FloatArray:
        """One forward pass over `texts` (the cache misses); tests count the calls here.

        A pass of many texts is cut into one part a core, computed at once (the first on
        this thread), each in batches of its share of `BATCH` texts: no more arrays are
        alive at once than one part would hold (`embedding.parts`)."""
        cut = parts.deal(texts, parts.cores())
        if len(cut) == 1:
            return self.encoder.compute(texts)
        computed = self._part_threads.compute(self.encoder.compute, cut, max(1, BATCH // len(cut)))
        rows = {
            text: row
            for part, vectors in zip(cut, computed, strict=True)
            for text, row in zip(part, vectors, strict=True)
        }
        return np.stack([rows[text] for text in texts])


def _as_reported(error: BaseException, texts: int) -> BaseException:
    """A pass's failure as its callers get it: numpy out of memory (its arrays, or the
    lists) is an EncoderError, as onnxruntime's own is (`Fail`), so relevance scoring goes on
    unfiltered and memory is left out, rather than the search or the run failing. So is a
    pass ended by what is not an Exception (a library's sys.exit()): handed on as it is, it
    would end a caller's event loop."""
    if isinstance(error, MemoryError):
        reported = EncoderError(f"the model ran out of memory in a pass over {texts} texts")
    elif not isinstance(error, Exception):
        reported = EncoderError(f"the model's pass stopped: {type(error).__name__}")
    else:
        return error
    reported.__cause__ = error
    return reported


def _key(text: str) -> bytes:
    # The whole text: what the window holds is known only once it is tokenized.
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _renew_lock(reference: weakref.ref[MiniLM]) -> None:
    model = reference()
    if model is not None:
        model._lock = threading.Lock()


# The variables a user sets to choose BLAS's threads; one of them set is left as it is.
BLAS_THREAD_VARIABLES = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
)


def _one_blas_thread() -> bool:
    """BLAS computes on the calling thread alone (made once a thread that computes starts:
    a library built with pthreads takes it for the process, one built with OpenMP for that
    thread); whether it does, as the loaded libraries report it. Its default, a thread a
    core that spins while it waits, fights whatever else keeps the cores busy (a local model
    server, other researchers' page extraction): `python -m benchmarks.embedding --busy 2`
    measured 0.59x the wall time and 0.25x the CPU time of two BLAS threads (docs/speed.md),
    when BLAS still computed the layers. A user who set one of BLAS_THREAD_VARIABLES keeps
    that choice; the layers are onnxruntime's now, one thread a part, whatever it is."""
    from threadpoolctl import threadpool_info, threadpool_limits

    try:
        if not any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
            threadpool_limits(limits=1, user_api="blas")
        blas = [pool for pool in threadpool_info() if pool.get("user_api") == "blas"]
    except (OSError, AttributeError, ValueError, RuntimeError) as error:  # a BLAS it cannot
        # drive: the model computes with BLAS's own threads, slower on a busy machine.
        log.warning("BLAS threads left as they are: %s", error)
        return False
    # None it can see (Apple's Accelerate): its threads are its own.
    return bool(blas) and all(pool.get("num_threads") == 1 for pool in blas)
